/* Weights and named tensors as safetensors files: round trips, the names
 * PyTorch's state_dict uses, strict and non-strict matching, conversion to
 * the model's dtype, and loads that fail without changing anything. */
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "checkpoint_support.h"

#define MODEL_BYTES 4096

static kiln_tensor* tensor_of(kiln_runtime* rt, const void* data, size_t nbytes, const int64_t* shape, int rank,
                              kiln_dtype dtype) {
  kiln_tensor* t = NULL;
  REQUIRE_OK(kiln_tensor_from_data(rt, data, nbytes, shape, rank, dtype, &t));
  return t;
}

/* A trained model's weights load into a model initialised differently in
 * another runtime, which then holds the same bytes. */
static void test_round_trip(void) {
  const char* path = scratch_path("mlp.safetensors");
  unsigned char saved[MODEL_BYTES], loaded[MODEL_BYTES];
  size_t saved_size;
  training_run a, b;
  run_open(&a, 3, 10, NULL, 0);
  run_step(&a);
  run_step(&a);
  CHECK_OK(kiln_weights_save(a.model, path));
  saved_size = run_model_bytes(&a, saved, sizeof saved);
  run_close(&a);

  run_open(&b, 77, 10, NULL, 0);
  CHECK(run_model_bytes(&b, loaded, sizeof loaded) == saved_size);
  CHECK(memcmp(saved, loaded, saved_size) != 0);
  CHECK_OK(kiln_weights_load(b.model, path, 1));
  run_model_bytes(&b, loaded, sizeof loaded);
  CHECK(memcmp(saved, loaded, saved_size) == 0);
  run_close(&b);
}

/* The file holds the state_dict names, parameters then buffers, and
 * num_batches_tracked as an i64 scalar as PyTorch keeps it. */
static void test_names(void) {
  static const char* const names[9] = {"fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight",
                                       "fc2.bias", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"};
  const char* path = scratch_path("names.safetensors");
  training_run r;
  kiln_example* file = NULL;
  size_t count = 0, i;
  run_open(&r, 3, 10, NULL, 0);
  run_step(&r);
  CHECK_OK(kiln_weights_save(r.model, path));
  CHECK_OK(kiln_safetensors_load(r.rt, path, &file));
  CHECK_OK(kiln_example_field_count(file, &count));
  CHECK(count == 9);
  for (i = 0; i < 9; ++i) {
    kiln_tensor* t = NULL;
    CHECK_OK(kiln_example_get(file, names[i], &t));
    kiln_tensor_release(t);
  }
  {
    kiln_tensor* tracked = NULL;
    kiln_dtype dtype;
    int rank = -1;
    int64_t value = 0;
    CHECK_OK(kiln_example_get(file, "bn.num_batches_tracked", &tracked));
    CHECK_OK(kiln_tensor_dtype(tracked, &dtype));
    CHECK_OK(kiln_tensor_rank(tracked, &rank));
    CHECK_OK(kiln_tensor_read(tracked, &value, sizeof value));
    CHECK(dtype == KILN_I64 && rank == 0 && value == 1);
    kiln_tensor_release(tracked);
  }
  kiln_example_release(file);
  run_close(&r);
}

/* Every dtype and a scalar survive kiln_safetensors_save and _load. */
static void test_tensors_round_trip(void) {
  const char* path = scratch_path("tensors.safetensors");
  const int64_t shape2[2] = {2, 3}, shape1[1] = {4};
  const float f32[6] = {1.5f, -2.0f, 3.25f, 0.0f, -0.0f, 1e-30f};
  const double f64[4] = {1e300, -1e-300, 3.0, 0.1};
  const int64_t i64[4] = {-9007199254740993LL, 0, 1, 42};
  const unsigned char u8[4] = {0, 1, 128, 255};
  const double scalar = 2.718281828459045;
  kiln_runtime* rt = open_runtime(1);
  kiln_example* ex = NULL;
  kiln_example* back = NULL;
  size_t count = 0;
  REQUIRE_OK(kiln_example_create(rt, &ex));
  {
    kiln_tensor* t[5];
    t[0] = tensor_of(rt, f32, sizeof f32, shape2, 2, KILN_F32);
    t[1] = tensor_of(rt, f64, sizeof f64, shape1, 1, KILN_F64);
    t[2] = tensor_of(rt, i64, sizeof i64, shape1, 1, KILN_I64);
    t[3] = tensor_of(rt, u8, sizeof u8, shape1, 1, KILN_U8);
    t[4] = tensor_of(rt, &scalar, sizeof scalar, NULL, 0, KILN_F64);
    REQUIRE_OK(kiln_example_set(ex, "f32", t[0]));
    REQUIRE_OK(kiln_example_set(ex, "f64", t[1]));
    REQUIRE_OK(kiln_example_set(ex, "i64", t[2]));
    REQUIRE_OK(kiln_example_set(ex, "u8", t[3]));
    REQUIRE_OK(kiln_example_set(ex, "a scalar \"quoted\" \xc3\xa9", t[4]));
    for (count = 0; count < 5; ++count) kiln_tensor_release(t[count]);
  }
  CHECK_OK(kiln_safetensors_save(ex, path));
  CHECK_OK(kiln_safetensors_load(rt, path, &back));
  CHECK_OK(kiln_example_field_count(back, &count));
  CHECK(count == 5);
  {
    float g32[6];
    double g64[4], gs = 0;
    int64_t g64i[4];
    unsigned char g8[4];
    kiln_tensor* t = NULL;
    CHECK_OK(kiln_example_get(back, "f32", &t));
    CHECK_OK(kiln_tensor_read(t, g32, sizeof g32));
    kiln_tensor_release(t);
    CHECK_OK(kiln_example_get(back, "f64", &t));
    CHECK_OK(kiln_tensor_read(t, g64, sizeof g64));
    kiln_tensor_release(t);
    CHECK_OK(kiln_example_get(back, "i64", &t));
    CHECK_OK(kiln_tensor_read(t, g64i, sizeof g64i));
    kiln_tensor_release(t);
    CHECK_OK(kiln_example_get(back, "u8", &t));
    CHECK_OK(kiln_tensor_read(t, g8, sizeof g8));
    kiln_tensor_release(t);
    CHECK_OK(kiln_example_get(back, "a scalar \"quoted\" \xc3\xa9", &t));
    CHECK_OK(kiln_tensor_read(t, &gs, sizeof gs));
    kiln_tensor_release(t);
    CHECK(memcmp(g32, f32, sizeof f32) == 0 && memcmp(g64, f64, sizeof f64) == 0);
    CHECK(memcmp(g64i, i64, sizeof i64) == 0 && memcmp(g8, u8, sizeof u8) == 0 && gs == scalar);
  }
  kiln_example_release(back);
  kiln_example_release(ex);
  kiln_runtime_release(rt);
}

/* Writes {weight, bias} of the given shapes and dtype (values 0.5, 1.5, ...). */
static void write_linear_file(kiln_runtime* rt, const char* path, int64_t out_features, kiln_dtype dtype,
                              const char* bias_name) {
  double values[64];
  float values32[64];
  const int64_t w_shape[2] = {out_features, 2}, b_shape[1] = {out_features};
  const size_t elem = dtype == KILN_F64 ? 8 : 4;
  kiln_example* ex = NULL;
  kiln_tensor *w, *b;
  int i;
  for (i = 0; i < 64; ++i) {
    values[i] = i + 0.5;
    values32[i] = (float)values[i];
  }
  REQUIRE_OK(kiln_example_create(rt, &ex));
  w = tensor_of(rt, dtype == KILN_F64 ? (const void*)values : (const void*)values32, (size_t)out_features * 2 * elem,
                w_shape, 2, dtype);
  b = tensor_of(rt, dtype == KILN_F64 ? (const void*)values : (const void*)values32, (size_t)out_features * elem,
                b_shape, 1, dtype);
  REQUIRE_OK(kiln_example_set(ex, "weight", w));
  REQUIRE_OK(kiln_example_set(ex, bias_name, b));
  REQUIRE_OK(kiln_safetensors_save(ex, path));
  kiln_tensor_release(w);
  kiln_tensor_release(b);
  kiln_example_release(ex);
}

static void test_matching(void) {
  const char* path = scratch_path("linear.safetensors");
  kiln_runtime* rt = open_runtime(1);
  kiln_module* linear = make_linear(rt);
  double before[LINEAR_PARAMS], after[LINEAR_PARAMS];

  /* f64 in the file, f32 in the model: converted on the way in. */
  write_linear_file(rt, path, 2, KILN_F64, "bias");
  CHECK_OK(kiln_weights_load(linear, path, 1));
  read_linear(linear, after);
  CHECK(after[0] == 0.5 && after[3] == 3.5 && after[4] == 0.5 && after[5] == 1.5);

  /* Another name for the bias: strict refuses and lists both sides;
   * non-strict loads the weight and keeps the bias. */
  write_linear_file(rt, path, 2, KILN_F32, "offset");
  read_linear(linear, before);
  CHECK_ERROR(kiln_weights_load(linear, path, 1), KILN_ERR_INVALID_ARGUMENT, "does not match the model (Linear)",
              "1 tensor(s) missing from the file: bias", "1 unexpected tensor(s) in the file: offset");
  read_linear(linear, after);
  CHECK(memcmp(before, after, sizeof before) == 0);
  CHECK_OK(kiln_weights_load(linear, path, 0));

  /* A shape that differs fails in both modes, and nothing is loaded, not
   * even the tensors that fit. */
  write_linear_file(rt, path, 3, KILN_F32, "bias");
  read_linear(linear, before);
  CHECK_ERROR(kiln_weights_load(linear, path, 0), KILN_ERR_SHAPE_MISMATCH, "weight (the file has [3, 2]",
              "has [2, 2])", "bias (the file has [3]");
  read_linear(linear, after);
  CHECK(memcmp(before, after, sizeof before) == 0);

  CHECK_ERROR(kiln_weights_load(linear, scratch_path("absent.safetensors"), 1), KILN_ERR_IO, "absent.safetensors");
  CHECK_ERROR(kiln_weights_load(NULL, path, 1), KILN_ERR_INVALID_ARGUMENT, "model");
  CHECK_ERROR(kiln_weights_save(linear, NULL), KILN_ERR_INVALID_ARGUMENT, "path");
  kiln_module_release(linear);
  kiln_runtime_release(rt);
}

/* A file cut short is refused with its reason, and the model keeps its weights. */
static void test_truncated_file(void) {
  const char* path = scratch_path("cut.safetensors");
  kiln_runtime* rt = open_runtime(1);
  kiln_module* linear = make_linear(rt);
  double before[LINEAR_PARAMS], after[LINEAR_PARAMS];
  write_linear_file(rt, path, 2, KILN_F32, "bias");
  CHECK(truncate(path, 100) == 0);
  read_linear(linear, before);
  CHECK_ERROR(kiln_weights_load(linear, path, 1), KILN_ERR_IO, "cut.safetensors");
  read_linear(linear, after);
  CHECK(memcmp(before, after, sizeof before) == 0);
  CHECK(truncate(path, 5) == 0);
  CHECK_ERROR(kiln_weights_load(linear, path, 1), KILN_ERR_IO, "cut.safetensors");
  kiln_module_release(linear);
  kiln_runtime_release(rt);
}

int main(void) {
  test_round_trip();
  test_names();
  test_tensors_round_trip();
  test_matching();
  test_truncated_file();
  return check_report("checkpoint/weights");
}
