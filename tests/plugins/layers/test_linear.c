/* Linear: forward against x W^T + b, gradients against finite differences,
 * and configuration errors. */
#include "layer_test.h"

static void test_forward_and_gradients(kiln_runtime* rt, int bias) {
  kiln_attr config[3];
  const int64_t shape[3] = {2, 3, 5};
  kts_rng rng;
  kiln_tensor* x = NULL;
  kiln_module* m;
  size_t n_params = 0;
  config[0] = kiln_attr_int("in_features", 5);
  config[1] = kiln_attr_int("out_features", 4);
  config[2] = kiln_attr_bool("bias", bias);
  m = make_module(rt, "Linear", config, 3, 1);
  if (!m) return;
  CHECK_OK(kiln_module_parameter_count(m, &n_params));
  CHECK(n_params == (bias ? 2u : 1u));
  kts_rng_seed(&rng, 1);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 3, -1.0, 1.0, &x));
  {
    double* xs = kts_read(x);
    double* w = parameter_values(m, "weight");
    double* b = bias ? parameter_values(m, "bias") : NULL;
    double* got = forward_values(m, &x, 1);
    double want[24];
    if (xs && w && got && (b || !bias)) {
      linear_reference(xs, 6, 5, w, b, 4, want);
      CHECK(kts_compare("Linear forward", got, want, 24, FORWARD_ATOL, FORWARD_RTOL) == 0);
    }
    free(xs);
    free(w);
    free(b);
    free(got);
  }
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  kiln_tensor_release(x);
  kiln_module_release(m);
}

static void test_config_errors(kiln_runtime* rt) {
  kiln_module* m = NULL;
  kiln_attr config[3];
  config[0] = kiln_attr_int("in_features", 0);
  config[1] = kiln_attr_int("out_features", 4);
  CHECK_ERROR(kiln_module_create(rt, "Linear", config, 2, &m), KILN_ERR_INVALID_ARGUMENT, "in_features", ">= 1",
              "got 0");
  config[0] = kiln_attr_int("in_features", 3);
  config[1] = kiln_attr_int("out_features", -2);
  CHECK_ERROR(kiln_module_create(rt, "Linear", config, 2, &m), KILN_ERR_INVALID_ARGUMENT, "out_features", "-2");
  config[1] = kiln_attr_int("out_features", 2);
  config[2] = kiln_attr_string("init", "uniform");
  CHECK_ERROR(kiln_module_create(rt, "Linear", config, 3, &m), KILN_ERR_INVALID_ARGUMENT, "init", "\"uniform\"",
              "kaiming_uniform", "xavier_normal");
  CHECK(m == NULL);
}

static void test_input_errors(kiln_runtime* rt) {
  kiln_attr config[2];
  const int64_t shape[2] = {2, 3};
  kiln_tensor *x = NULL, *y = NULL;
  kiln_module* m;
  config[0] = kiln_attr_int("in_features", 4);
  config[1] = kiln_attr_int("out_features", 2);
  m = make_module(rt, "Linear", config, 2, 0);
  CHECK_OK(kiln_tensor_full(rt, shape, 2, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &x));
  if (m && x) {
    kiln_tensor* two[2];
    two[0] = two[1] = x;
    CHECK_ERROR(kiln_module_forward1(m, &x, 1, &y), KILN_ERR_SHAPE_MISMATCH, "3 features", "expects 4");
    CHECK_ERROR(kiln_module_forward1(m, two, 2, &y), KILN_ERR_INVALID_ARGUMENT, "Linear takes 1 input, got 2");
  }
  CHECK(y == NULL);
  kiln_tensor_release(x);
  kiln_module_release(m);
}

int main(void) {
  kiln_runtime* rt = layer_test_runtime();
  test_forward_and_gradients(rt, 1);
  test_forward_and_gradients(rt, 0);
  test_config_errors(rt);
  test_input_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/linear");
}
