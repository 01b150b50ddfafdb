/* Conv2d and DepthwiseSeparableConv2d: forward against plain loops,
 * gradients against finite differences, parameter shapes, configuration
 * errors. */
#include "layer_test.h"

/* Conv2d(4 -> 6, kernel [3, 2], stride [2, 1], padding [1], dilation [1, 2],
 * groups 2) on x [2, 4, 5, 6]. */
static void test_conv2d(kiln_runtime* rt) {
  const int64_t kernel[2] = {3, 2}, stride[2] = {2, 1}, padding[1] = {1}, dilation[2] = {1, 2};
  const int64_t shape[4] = {2, 4, 5, 6};
  const int64_t weight_shape[4] = {6, 2, 3, 2};
  conv_reference_geometry g = {2, 4, 5, 6, 6, 3, 2, {2, 1}, {1, 1}, {1, 2}, 2};
  kiln_attr config[7];
  kts_rng rng;
  kiln_tensor *x = NULL, *weight = NULL;
  kiln_module* m;
  config[0] = kiln_attr_int("in_channels", 4);
  config[1] = kiln_attr_int("out_channels", 6);
  config[2] = kiln_attr_ints("kernel_size", kernel, 2);
  config[3] = kiln_attr_ints("stride", stride, 2);
  config[4] = kiln_attr_ints("padding", padding, 1);
  config[5] = kiln_attr_ints("dilation", dilation, 2);
  config[6] = kiln_attr_int("groups", 2);
  m = make_module(rt, "Conv2d", config, 7, 1);
  if (!m) return;
  weight = kts_parameter(m, "weight");
  CHECK(weight && has_shape(weight, weight_shape, 4));
  kts_rng_seed(&rng, 2);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 4, -1.0, 1.0, &x));
  {
    const int64_t oh = conv_reference_out(5, 3, 2, 1, 1), ow = conv_reference_out(6, 2, 1, 1, 2);
    const int64_t n_out = 2 * 6 * oh * ow;
    check_weighted_forward("Conv2d forward", m, x, n_out, conv2d_forward_reference, &g);
  }
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  kiln_tensor_release(weight);
  kiln_tensor_release(x);
  kiln_module_release(m);
}

/* DepthwiseSeparableConv2d(3 -> 5, kernel 3, padding 1, stride 2) on
 * x [2, 3, 5, 5]: the depthwise then the pointwise reference. */
static void test_separable(kiln_runtime* rt) {
  const int64_t kernel[1] = {3}, stride[1] = {2}, padding[1] = {1};
  const int64_t shape[4] = {2, 3, 5, 5};
  const int64_t depthwise_shape[4] = {3, 1, 3, 3}, pointwise_shape[4] = {5, 3, 1, 1};
  conv_reference_geometry depthwise = {2, 3, 5, 5, 3, 3, 3, {2, 2}, {1, 1}, {1, 1}, 3};
  conv_reference_geometry pointwise = {2, 3, 3, 3, 5, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1};
  kiln_attr config[5];
  kts_rng rng;
  kiln_tensor *x = NULL, *dw = NULL, *pw = NULL;
  kiln_module* m;
  config[0] = kiln_attr_int("in_channels", 3);
  config[1] = kiln_attr_int("out_channels", 5);
  config[2] = kiln_attr_ints("kernel_size", kernel, 1);
  config[3] = kiln_attr_ints("stride", stride, 1);
  config[4] = kiln_attr_ints("padding", padding, 1);
  m = make_module(rt, "DepthwiseSeparableConv2d", config, 5, 1);
  if (!m) return;
  dw = kts_parameter(m, "depthwise.weight");
  pw = kts_parameter(m, "pointwise.weight");
  CHECK(dw && has_shape(dw, depthwise_shape, 4));
  CHECK(pw && has_shape(pw, pointwise_shape, 4));
  kts_rng_seed(&rng, 3);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 4, -1.0, 1.0, &x));
  {
    double* xs = kts_read(x);
    double* dw_values = parameter_values(m, "depthwise.weight");
    double* db = parameter_values(m, "depthwise.bias");
    double* pw_values = parameter_values(m, "pointwise.weight");
    double* pb = parameter_values(m, "pointwise.bias");
    double* got = forward_values(m, &x, 1);
    double middle[2 * 3 * 3 * 3], want[2 * 5 * 3 * 3];
    if (xs && dw_values && db && pw_values && pb && got) {
      conv2d_reference(&depthwise, xs, dw_values, db, middle);
      conv2d_reference(&pointwise, middle, pw_values, pb, want);
      CHECK(kts_compare("DepthwiseSeparableConv2d forward", got, want, (int64_t)COUNT(want), FORWARD_ATOL,
                        FORWARD_RTOL) == 0);
    }
    free(xs);
    free(dw_values);
    free(db);
    free(pw_values);
    free(pb);
    free(got);
  }
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  kiln_tensor_release(dw);
  kiln_tensor_release(pw);
  kiln_tensor_release(x);
  kiln_module_release(m);
}

static void test_config_errors(kiln_runtime* rt) {
  const int64_t three[3] = {3, 3, 3}, zero_stride[1] = {0}, kernel[1] = {3}, negative[1] = {-1};
  kiln_module* m = NULL;
  kiln_attr config[5];
  config[0] = kiln_attr_int("in_channels", 4);
  config[1] = kiln_attr_int("out_channels", 6);
  config[2] = kiln_attr_ints("kernel_size", three, 3);
  CHECK_ERROR(kiln_module_create(rt, "Conv2d", config, 3, &m), KILN_ERR_INVALID_ARGUMENT, "kernel_size",
              "1 or 2 values", "got 3");
  CHECK_ERROR(kiln_module_create(rt, "DepthwiseSeparableConv2d", config, 3, &m), KILN_ERR_INVALID_ARGUMENT,
              "kernel_size", "1 or 2 values");
  config[2] = kiln_attr_ints("kernel_size", kernel, 1);
  config[3] = kiln_attr_ints("stride", zero_stride, 1);
  CHECK_ERROR(kiln_module_create(rt, "Conv2d", config, 4, &m), KILN_ERR_INVALID_ARGUMENT, "stride", ">= 1",
              "got 0");
  config[3] = kiln_attr_ints("padding", negative, 1);
  CHECK_ERROR(kiln_module_create(rt, "Conv2d", config, 4, &m), KILN_ERR_INVALID_ARGUMENT, "padding", ">= 0");
  config[3] = kiln_attr_int("groups", 3);
  CHECK_ERROR(kiln_module_create(rt, "Conv2d", config, 4, &m), KILN_ERR_INVALID_ARGUMENT, "groups = 3",
              "in_channels (4)", "out_channels (6)");
  config[0] = kiln_attr_int("in_channels", 0);
  CHECK_ERROR(kiln_module_create(rt, "Conv2d", config, 3, &m), KILN_ERR_INVALID_ARGUMENT, "in_channels", ">= 1");
  CHECK(m == NULL);
}

int main(void) {
  kiln_runtime* rt = layer_test_runtime();
  test_conv2d(rt);
  test_separable(rt);
  test_config_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/conv");
}
