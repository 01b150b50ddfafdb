/* Creating layers (and failing to), a layer's sub-layers and their names,
 * and handles that outlive their runtime and their plugin's registration. */
#include "module_test.h"

static void create_failures(kiln_runtime* rt) {
  kiln_module* m = NULL;
  const kiln_attr negative = kiln_attr_int("features", -3);
  const kiln_attr wrong_type = kiln_attr_string("features", "three");
  CHECK_ERROR(kiln_module_create(rt, "Affine", &negative, 1, &m), KILN_ERR_INVALID_ARGUMENT,
              "layer 'Affine': ", "'features' must be positive, got -3");
  CHECK_ERROR(kiln_module_create(rt, "Affine", NULL, 0, &m), KILN_ERR_INVALID_ARGUMENT, "features");
  CHECK_ERROR(kiln_module_create(rt, "Affine", &wrong_type, 1, &m), KILN_ERR_INVALID_ARGUMENT, "features");
  CHECK_ERROR(kiln_module_create(rt, "Afine", &negative, 1, &m), KILN_ERR_NOT_FOUND, "Afine");
  CHECK_ERROR(kiln_module_create(rt, NULL, NULL, 0, &m), KILN_ERR_INVALID_ARGUMENT, "'type' is NULL");
  CHECK(m == NULL);
  /* The Block's sub-layer fails, and the Block with it. */
  CHECK_ERROR(kiln_module_create(rt, "Block", &negative, 1, &m), KILN_ERR_INVALID_ARGUMENT,
              "layer 'Block': ", "'features' must be positive, got -3");
  CHECK(m == NULL);
}

static void check_names(const kiln_module* m, int buffers, const char* const* want, size_t n_want) {
  size_t count = 0, i;
  if (buffers)
    CHECK_OK(kiln_module_buffer_count(m, &count));
  else
    CHECK_OK(kiln_module_parameter_count(m, &count));
  CHECK(count == n_want);
  for (i = 0; i < count && i < n_want; ++i) {
    const char* name = NULL;
    kiln_tensor* t = NULL;
    if (buffers)
      CHECK_OK(kiln_module_buffer(m, i, &name, &t));
    else
      CHECK_OK(kiln_module_parameter(m, i, &name, &t));
    if (!name || strcmp(name, want[i]) != 0) {
      fprintf(stderr, "entry %zu is '%s', expected '%s'\n", i, name ? name : "(NULL)", want[i]);
      ++check_failures;
    }
    kiln_tensor_release(t);
  }
}

static void sub_layers(kiln_runtime* rt) {
  static const char* const params[5] = {"gate", "first.weight", "first.bias", "second.weight", "second.bias"};
  static const char* const buffers[2] = {"first.feature_count", "second.feature_count"};
  static const char* const nested[7] = {"0.gate",        "0.first.weight", "0.first.bias", "0.second.weight",
                                        "0.second.bias", "1.weight",       "1.bias"};
  const kiln_attr features = kiln_attr_int("features", 2);
  kiln_module *block = NULL, *seq = NULL, *tail = NULL;
  const char* type = NULL;
  CHECK_OK(kiln_module_create(rt, "Block", &features, 1, &block));
  CHECK_OK(kiln_module_type(block, &type));
  CHECK(type && strcmp(type, "Block") == 0);
  check_names(block, 0, params, 5);
  check_names(block, 1, buffers, 2);
  CHECK_OK(kiln_module_create(rt, "Affine", &features, 1, &tail));
  CHECK_OK(kiln_sequential_create(rt, &seq));
  CHECK_OK(kiln_sequential_append(seq, NULL, block));
  CHECK_OK(kiln_sequential_append(seq, NULL, tail));
  check_names(seq, 0, nested, 7);
  kiln_module_release(seq);
  kiln_module_release(tail);
  kiln_module_release(block);
}

/* The runtime and the plugin's registration go first; the module keeps
 * both alive and still runs. */
static void module_outlives_runtime_and_unload(void) {
  static const float x_data[2] = {1, 2};
  static const int64_t shape[1] = {2};
  const kiln_attr features = kiln_attr_int("features", 2);
  kiln_runtime* rt = test_runtime();
  kiln_module *seq = NULL, *block = NULL, *again = NULL;
  kiln_tensor* x;
  float got[2];
  if (!rt) return;
  x = tensor_f32(rt, x_data, shape, 1);
  CHECK_OK(kiln_module_create(rt, "Block", &features, 1, &block));
  CHECK_OK(kiln_sequential_create(rt, &seq));
  CHECK_OK(kiln_sequential_append(seq, NULL, block));
  kiln_module_release(block);
  CHECK_OK(kiln_module_set_training(seq, 0));
  CHECK_OK(kiln_plugin_unload(rt, "modules-test"));
  CHECK_ERROR(kiln_module_create(rt, "Block", &features, 1, &again), KILN_ERR_NOT_FOUND, "Block");
  kiln_runtime_release(rt);
  forward_read(seq, x, got, 2);
  check_close(got, x_data, 2, "a Block of ones after its runtime and plugin were released");
  kiln_tensor_release(x);
  kiln_module_release(seq);
}

static void null_arguments(kiln_runtime* rt) {
  kiln_tensor* y = NULL;
  size_t n = 0;
  CHECK_ERROR(kiln_module_forward(NULL, NULL, 0, &y, 1, &n), KILN_ERR_INVALID_ARGUMENT, "'m' is NULL");
  CHECK_ERROR(kiln_sequential_create(rt, NULL), KILN_ERR_INVALID_ARGUMENT, "'out' is NULL");
  kiln_module_release(NULL);
  kiln_module_retain(NULL);
}

int main(void) {
  kiln_runtime* rt = test_runtime();
  if (!rt) return check_report("modules/lifetime");
  create_failures(rt);
  sub_layers(rt);
  null_arguments(rt);
  kiln_runtime_release(rt);
  module_outlives_runtime_and_unload();
  return check_report("modules/lifetime");
}
