/* Bad arguments give a status and a message that says what was wrong: NULL
 * handles and out-pointers, values out of range, unknown ops, wrong shapes,
 * dtypes and attributes, buffers too small. */
#include <stdint.h>
#include <string.h>

#include "check.h"

static void version_and_status_names(void) {
  char expected[32];
  sprintf(expected, "%d.%d.%d", KILN_VERSION_MAJOR, KILN_VERSION_MINOR, KILN_VERSION_PATCH);
  CHECK(strcmp(kiln_version(), expected) == 0);
  CHECK(strcmp(kiln_status_name(KILN_OK), "ok") == 0);
  CHECK(strcmp(kiln_status_name(KILN_ERR_SHAPE_MISMATCH), "shape mismatch") == 0);
  CHECK(strcmp(kiln_status_name(KILN_ERR_TIMEOUT), "timeout") == 0);
  CHECK(strcmp(kiln_status_name(KILN_ERR_PEER), "peer failure") == 0);
  CHECK(strcmp(kiln_status_name((kiln_status)99), "unknown status") == 0);
}

static void null_handles_and_out_pointers(kiln_runtime* rt, kiln_tensor* t) {
  const int64_t shape[2] = {2, 3};
  const kiln_op* op = NULL;
  kiln_tensor* out = NULL;
  float buffer[6];
  int64_t dims[8];
  int rank;
  size_t n_out;
  kiln_memory_stats stats;

  CHECK_ERROR(kiln_runtime_create(NULL, NULL), KILN_ERR_INVALID_ARGUMENT, "kiln_runtime_create", "'out'");
  CHECK_ERROR(kiln_tensor_empty(NULL, shape, 2, KILN_F32, KILN_DEVICE_CPU, 0, &out), KILN_ERR_INVALID_ARGUMENT,
              "kiln_tensor_empty", "'rt'");
  CHECK_ERROR(kiln_tensor_full(rt, shape, 2, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, NULL), KILN_ERR_INVALID_ARGUMENT,
              "kiln_tensor_full", "'out'");
  CHECK_ERROR(kiln_tensor_zeros(rt, NULL, 2, KILN_F32, KILN_DEVICE_CPU, 0, &out), KILN_ERR_INVALID_ARGUMENT,
              "'shape'");
  CHECK_ERROR(kiln_tensor_from_data(rt, NULL, 24, shape, 2, KILN_F32, &out), KILN_ERR_INVALID_ARGUMENT,
              "kiln_tensor_from_data", "'data'");
  CHECK_ERROR(kiln_tensor_wrap(rt, NULL, 24, shape, 2, KILN_F32, NULL, NULL, &out), KILN_ERR_INVALID_ARGUMENT,
              "kiln_tensor_wrap", "'data'");
  CHECK_ERROR(kiln_tensor_read(NULL, buffer, sizeof buffer), KILN_ERR_INVALID_ARGUMENT, "kiln_tensor_read", "'t'");
  CHECK_ERROR(kiln_tensor_read(t, NULL, sizeof buffer), KILN_ERR_INVALID_ARGUMENT, "kiln_tensor_read", "'dst'");
  CHECK_ERROR(kiln_tensor_rank(t, NULL), KILN_ERR_INVALID_ARGUMENT, "kiln_tensor_rank", "'out'");
  CHECK_ERROR(kiln_tensor_shape(NULL, dims, 8), KILN_ERR_INVALID_ARGUMENT, "kiln_tensor_shape", "'t'");
  CHECK_ERROR(kiln_tensor_device(t, NULL, &rank), KILN_ERR_INVALID_ARGUMENT, "kiln_tensor_device", "'type'");
  CHECK_ERROR(kiln_tensor_grad(t, NULL), KILN_ERR_INVALID_ARGUMENT, "kiln_tensor_grad", "'out'");
  CHECK_ERROR(kiln_tensor_detach(NULL, &out), KILN_ERR_INVALID_ARGUMENT, "kiln_tensor_detach", "'t'");
  CHECK_ERROR(kiln_op_find(rt, NULL, &op), KILN_ERR_INVALID_ARGUMENT, "kiln_op_find", "'name'");
  CHECK_ERROR(kiln_op_find(rt, "copy", NULL), KILN_ERR_INVALID_ARGUMENT, "kiln_op_find", "'out'");
  CHECK_ERROR(kiln_op_call1(rt, NULL, &t, 1, NULL, 0, &out), KILN_ERR_INVALID_ARGUMENT, "kiln_op_call1", "'op'");
  CHECK_OK(kiln_op_find(rt, "copy", &op));
  CHECK_ERROR(kiln_op_call(rt, op, NULL, 1, NULL, 0, &out, 1, &n_out), KILN_ERR_INVALID_ARGUMENT, "kiln_op_call",
              "'inputs'");
  CHECK_ERROR(kiln_op_call(rt, op, &t, 1, NULL, 0, &out, 1, NULL), KILN_ERR_INVALID_ARGUMENT, "kiln_op_call",
              "'n_outputs'");
  CHECK_ERROR(kiln_op_call(rt, op, &t, 1, NULL, 2, &out, 1, &n_out), KILN_ERR_INVALID_ARGUMENT, "'attrs'");
  CHECK_ERROR(kiln_backward(NULL, t, NULL, 0), KILN_ERR_INVALID_ARGUMENT, "kiln_backward", "'rt'");
  CHECK_ERROR(kiln_no_grad_begin(NULL), KILN_ERR_INVALID_ARGUMENT, "kiln_no_grad_begin", "'rt'");
  CHECK_ERROR(kiln_manual_seed(NULL, 1), KILN_ERR_INVALID_ARGUMENT, "kiln_manual_seed", "'rt'");
  CHECK_ERROR(kiln_memory_stats_get(rt, KILN_DEVICE_CPU, 0, NULL), KILN_ERR_INVALID_ARGUMENT, "'out'");
  stats.size = 0;
  CHECK_ERROR(kiln_memory_stats_get(rt, KILN_DEVICE_CPU, 0, &stats), KILN_ERR_INVALID_ARGUMENT,
              "sizeof(kiln_memory_stats)");
  CHECK(out == NULL); /* failures give nothing */

  /* Releasing NULL does nothing. */
  kiln_tensor_release(NULL);
  kiln_runtime_release(NULL);
  kiln_tensor_retain(NULL);
  kiln_runtime_retain(NULL);
}

static void values_out_of_range(kiln_runtime* rt) {
  const int64_t shape[2] = {2, 3}, negative[2] = {2, -3};
  kiln_runtime_options options;
  kiln_runtime* other = NULL;
  kiln_tensor* out = NULL;
  memset(&options, 0, sizeof options);
  CHECK_ERROR(kiln_runtime_create(&options, &other), KILN_ERR_INVALID_ARGUMENT, "sizeof(kiln_runtime_options)");
  CHECK_ERROR(kiln_tensor_empty(rt, shape, 2, (kiln_dtype)42, KILN_DEVICE_CPU, 0, &out), KILN_ERR_INVALID_ARGUMENT,
              "dtype", "42");
  CHECK_ERROR(kiln_tensor_empty(rt, shape, 2, KILN_F32, (kiln_device_type)7, 0, &out), KILN_ERR_INVALID_ARGUMENT,
              "device type", "7");
  CHECK_ERROR(kiln_tensor_empty(rt, shape, 2, KILN_F32, KILN_DEVICE_CPU, 1, &out), KILN_ERR_INVALID_ARGUMENT,
              "index 0");
  CHECK_ERROR(kiln_tensor_empty(rt, shape, 9, KILN_F32, KILN_DEVICE_CPU, 0, &out), KILN_ERR_INVALID_ARGUMENT,
              "rank 9");
  CHECK_ERROR(kiln_tensor_empty(rt, negative, 2, KILN_F32, KILN_DEVICE_CPU, 0, &out), KILN_ERR_INVALID_ARGUMENT,
              "negative", "[2, -3]");
  CHECK_ERROR(kiln_tensor_empty(rt, shape, 2, KILN_F32, KILN_DEVICE_CUDA, 99, &out), KILN_ERR_DEVICE_MISMATCH,
              "cuda:99");
  CHECK(out == NULL && other == NULL);
}

static void unknown_op(kiln_runtime* rt) {
  const kiln_op* op = NULL;
  CHECK_ERROR(kiln_op_find(rt, "no_such_op", &op), KILN_ERR_NOT_FOUND, "kiln_op_find", "no_such_op");
  CHECK(op == NULL);
}

static void wrong_shape_dtype_and_attributes(kiln_runtime* rt, kiln_tensor* t) {
  const int64_t wrong[2] = {4, 2}, right[2] = {3, 2}, ints_shape[1] = {4};
  const kiln_op *reshape = NULL, *sum_to = NULL;
  kiln_tensor *out = NULL, *ints = NULL;
  kiln_attr attr;
  size_t n_out = 0;

  CHECK_OK(kiln_op_find(rt, "reshape", &reshape));
  attr = kiln_attr_ints("shape", wrong, 2);
  CHECK_ERROR(kiln_op_call1(rt, reshape, &t, 1, &attr, 1, &out), KILN_ERR_SHAPE_MISMATCH, "kiln_op_call1",
              "'reshape'", "[2, 3]", "[4, 2]");

  attr = kiln_attr_ints("shap", right, 2);
  CHECK_ERROR(kiln_op_call1(rt, reshape, &t, 1, &attr, 1, &out), KILN_ERR_INVALID_ARGUMENT, "'reshape'", "'shap'",
              "shape");
  attr = kiln_attr_float("shape", 1.5);
  CHECK_ERROR(kiln_op_call1(rt, reshape, &t, 1, &attr, 1, &out), KILN_ERR_INVALID_ARGUMENT, "'shape'",
              "integer list", "real");
  attr.type = (kiln_attr_type)99;
  CHECK_ERROR(kiln_op_call1(rt, reshape, &t, 1, &attr, 1, &out), KILN_ERR_INVALID_ARGUMENT, "kiln_attr_type", "99");
  attr = kiln_attr_ints(NULL, right, 2);
  CHECK_ERROR(kiln_op_call1(rt, reshape, &t, 1, &attr, 1, &out), KILN_ERR_INVALID_ARGUMENT, "attrs[0].name");
  CHECK_ERROR(kiln_op_call1(rt, reshape, &t, 1, NULL, 0, &out), KILN_ERR_INVALID_ARGUMENT, "'shape'", "required");
  attr = kiln_attr_ints("shape", right, 2);
  CHECK_ERROR(kiln_op_call1(rt, reshape, NULL, 0, &attr, 1, &out), KILN_ERR_INVALID_ARGUMENT, "'reshape'", "input");
  CHECK_ERROR(kiln_op_call(rt, reshape, &t, 1, &attr, 1, &out, 0, &n_out), KILN_ERR_INVALID_ARGUMENT,
              "room for 0");
  CHECK(out == NULL);
  CHECK_OK(kiln_op_call(rt, reshape, &t, 1, &attr, 1, &out, 1, &n_out));
  CHECK(n_out == 1 && out != NULL);
  kiln_tensor_release(out);

  CHECK_OK(kiln_tensor_zeros(rt, ints_shape, 1, KILN_I64, KILN_DEVICE_CPU, 0, &ints));
  CHECK_OK(kiln_op_find(rt, "sum_to", &sum_to));
  attr = kiln_attr_ints("shape", ints_shape, 1);
  out = NULL;
  CHECK_ERROR(kiln_op_call1(rt, sum_to, &ints, 1, &attr, 1, &out), KILN_ERR_DTYPE_MISMATCH, "'sum_to'", "i64");
  CHECK_ERROR(kiln_tensor_set_requires_grad(ints, 1), KILN_ERR_DTYPE_MISMATCH, "floating", "i64");
  CHECK(out == NULL);
  kiln_tensor_release(ints);
}

static void buffers_and_queries(kiln_runtime* rt, kiln_tensor* t) {
  const int64_t shape[2] = {2, 3};
  const float values[6] = {1, 2, 3, 4, 5, 6};
  float small[5], back[6];
  int64_t dims[8], numel = 0;
  int rank = 0, index = -1;
  kiln_dtype dtype;
  kiln_device_type device;
  kiln_tensor* copy = NULL;

  CHECK_ERROR(kiln_tensor_read(t, small, sizeof small), KILN_ERR_INVALID_ARGUMENT, "20 bytes", "needs 24");
  CHECK_ERROR(kiln_tensor_from_data(rt, values, 20, shape, 2, KILN_F32, &copy), KILN_ERR_INVALID_ARGUMENT,
              "24 bytes", "20");
  CHECK_OK(kiln_tensor_from_data(rt, values, sizeof values, shape, 2, KILN_F32, &copy));
  CHECK_OK(kiln_tensor_read(copy, back, sizeof back));
  CHECK(memcmp(values, back, sizeof back) == 0);

  CHECK_OK(kiln_tensor_rank(copy, &rank));
  CHECK(rank == 2);
  CHECK_ERROR(kiln_tensor_shape(copy, dims, 1), KILN_ERR_INVALID_ARGUMENT, "holds 1");
  CHECK_OK(kiln_tensor_shape(copy, dims, 8));
  CHECK(dims[0] == 2 && dims[1] == 3);
  CHECK_OK(kiln_tensor_numel(copy, &numel));
  CHECK(numel == 6);
  CHECK_OK(kiln_tensor_dtype(copy, &dtype));
  CHECK(dtype == KILN_F32);
  CHECK_OK(kiln_tensor_device(copy, &device, &index));
  CHECK(device == KILN_DEVICE_CPU && index == 0);
  kiln_tensor_release(copy);
}

static void memory_stats(kiln_runtime* rt) {
  kiln_memory_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.size = sizeof stats;
  CHECK_OK(kiln_memory_stats_get(rt, KILN_DEVICE_CPU, 0, &stats));
  CHECK(stats.current_bytes >= 24 && stats.peak_bytes >= stats.current_bytes && stats.num_allocs >= 1);
  /* A caller built against an older, shorter struct gets only its fields. */
  memset(&stats, 0, sizeof stats);
  stats.size = offsetof(kiln_memory_stats, peak_bytes);
  CHECK_OK(kiln_memory_stats_get(rt, KILN_DEVICE_CPU, 0, &stats));
  CHECK(stats.current_bytes >= 24 && stats.peak_bytes == 0);
  CHECK_ERROR(kiln_memory_stats_get(rt, KILN_DEVICE_CUDA, 99, &stats), KILN_ERR_DEVICE_MISMATCH, "cuda:99");
}

int main(void) {
  const int64_t shape[2] = {2, 3};
  kiln_runtime_options options = {.size = sizeof(kiln_runtime_options), .num_threads = 1};
  kiln_runtime* rt = NULL;
  kiln_tensor* t = NULL;
  if (kiln_runtime_create(&options, &rt) != KILN_OK ||
      kiln_tensor_full(rt, shape, 2, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &t) != KILN_OK) {
    fprintf(stderr, "setup failed: %s\n", kiln_last_error());
    return 1;
  }
  version_and_status_names();
  null_handles_and_out_pointers(rt, t);
  values_out_of_range(rt);
  unknown_op(rt);
  wrong_shape_dtype_and_attributes(rt, t);
  buffers_and_queries(rt, t);
  memory_stats(rt);
  kiln_tensor_release(t);
  kiln_runtime_release(rt);
  return check_report("abi/arguments");
}
