/* Conv1d: forward against the 2-D reference on a height of 1, gradients
 * against finite differences, parameter shapes, configuration errors. */
#include "layer_test.h"

/* Conv1d(4 -> 6, kernel 3, stride 2, padding 1, dilation 2, groups 2) on
 * x [2, 4, 9]. */
static void test_conv1d(kiln_runtime* rt) {
  const int64_t kernel[1] = {3}, stride[1] = {2}, padding[1] = {1}, dilation[1] = {2};
  const int64_t shape[3] = {2, 4, 9};
  const int64_t weight_shape[3] = {6, 2, 3};
  conv_reference_geometry g = {2, 4, 1, 9, 6, 1, 3, {1, 2}, {0, 1}, {1, 2}, 2};
  kiln_attr config[7];
  kts_rng rng;
  kiln_tensor *x = NULL, *weight = NULL;
  kiln_module* m;
  config[0] = kiln_attr_int("in_channels", 4);
  config[1] = kiln_attr_int("out_channels", 6);
  config[2] = kiln_attr_ints("kernel_size", kernel, 1);
  config[3] = kiln_attr_ints("stride", stride, 1);
  config[4] = kiln_attr_ints("padding", padding, 1);
  config[5] = kiln_attr_ints("dilation", dilation, 1);
  config[6] = kiln_attr_int("groups", 2);
  m = make_module(rt, "Conv1d", config, 7, 1);
  if (!m) return;
  weight = kts_parameter(m, "weight");
  CHECK(weight && has_shape(weight, weight_shape, 3));
  kts_rng_seed(&rng, 5);
  randomize_parameter(rt, m, "bias", &rng);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 3, -1.0, 1.0, &x));
  {
    const int64_t n_out = 2 * 6 * conv_reference_out(9, 3, 2, 1, 2);
    check_weighted_forward("Conv1d forward", m, x, n_out, conv2d_forward_reference, &g);
  }
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  kiln_tensor_release(weight);
  kiln_tensor_release(x);
  kiln_module_release(m);
}

static void test_config_errors(kiln_runtime* rt) {
  const int64_t pair[2] = {3, 3}, kernel[1] = {3};
  kiln_module* m = NULL;
  kiln_attr config[4];
  config[0] = kiln_attr_int("in_channels", 4);
  config[1] = kiln_attr_int("out_channels", 6);
  config[2] = kiln_attr_ints("kernel_size", pair, 2);
  CHECK_ERROR(kiln_module_create(rt, "Conv1d", config, 3, &m), KILN_ERR_INVALID_ARGUMENT, "Conv1d",
              "kernel_size takes 1 value (length), got 2");
  config[2] = kiln_attr_ints("kernel_size", kernel, 1);
  config[3] = kiln_attr_ints("stride", pair, 2);
  CHECK_ERROR(kiln_module_create(rt, "Conv1d", config, 4, &m), KILN_ERR_INVALID_ARGUMENT, "Conv1d",
              "stride takes 1 value");
  config[3] = kiln_attr_int("groups", 4);
  CHECK_ERROR(kiln_module_create(rt, "Conv1d", config, 4, &m), KILN_ERR_INVALID_ARGUMENT, "Conv1d", "groups = 4",
              "out_channels (6)");
  CHECK(m == NULL);
}

int main(void) {
  kiln_runtime* rt = layer_test_runtime();
  test_conv1d(rt);
  test_config_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/conv1d");
}
