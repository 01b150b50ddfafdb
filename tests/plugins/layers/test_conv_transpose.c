/* ConvTranspose2d: forward against a scatter reference, gradients against
 * finite differences, parameter shapes, configuration errors. */
#include "layer_test.h"

/* The transposed convolution of x [n, c, h, w] with w [c, o / groups, kh,
 * kw] into y [n, o, oh, ow]: each input element adds its products with the
 * kernel into the output window it maps to. g->o is the output's channels. */
static void conv_transpose2d_reference(const conv_reference_geometry* g, int64_t oh, int64_t ow, const double* x,
                                       const double* w, const double* b, double* y) {
  const int64_t og = g->o / g->groups, cg = g->c / g->groups;
  int64_t n, c, iy, ix, oc, ky, kx, i;
  for (i = 0; i < g->n * g->o * oh * ow; ++i) y[i] = b ? b[(i / (oh * ow)) % g->o] : 0.0;
  for (n = 0; n < g->n; ++n)
    for (c = 0; c < g->c; ++c)
      for (iy = 0; iy < g->h; ++iy)
        for (ix = 0; ix < g->w; ++ix)
          for (oc = 0; oc < og; ++oc)
            for (ky = 0; ky < g->kh; ++ky)
              for (kx = 0; kx < g->kw; ++kx) {
                const int64_t y0 = iy * g->stride[0] - g->padding[0] + ky * g->dilation[0];
                const int64_t x0 = ix * g->stride[1] - g->padding[1] + kx * g->dilation[1];
                const int64_t o = (c / cg) * og + oc;
                if (y0 < 0 || y0 >= oh || x0 < 0 || x0 >= ow) continue;
                y[((n * g->o + o) * oh + y0) * ow + x0] +=
                    x[((n * g->c + c) * g->h + iy) * g->w + ix] * w[((c * og + oc) * g->kh + ky) * g->kw + kx];
              }
}

/* The geometry of a transposed convolution and its output's height and width. */
typedef struct transposed_geometry {
  conv_reference_geometry g;
  int64_t oh, ow;
} transposed_geometry;

/* conv_transpose2d_reference as a forward_reference. */
static void transposed_reference(const void* context, const double* x, const double* w, const double* b, double* y) {
  const transposed_geometry* t = (const transposed_geometry*)context;
  conv_transpose2d_reference(&t->g, t->oh, t->ow, x, w, b, y);
}

/* ConvTranspose2d(4 -> 6, kernel [3, 2], stride [2, 2], padding [1, 0],
 * output_padding [1, 0], groups 2, dilation [1, 2]) on x [2, 4, 3, 4]. */
static void test_conv_transpose2d(kiln_runtime* rt) {
  const int64_t kernel[2] = {3, 2}, stride[1] = {2}, padding[2] = {1, 0}, output_padding[2] = {1, 0};
  const int64_t dilation[2] = {1, 2};
  const int64_t shape[4] = {2, 4, 3, 4};
  const int64_t weight_shape[4] = {4, 3, 3, 2};
  const int64_t oh = (3 - 1) * 2 - 2 + 1 * (3 - 1) + 1 + 1, ow = (4 - 1) * 2 - 0 + 2 * (2 - 1) + 0 + 1;
  const int64_t out_shape[4] = {2, 6, 6, 9};
  const transposed_geometry t = {{2, 4, 3, 4, 6, 3, 2, {2, 2}, {1, 0}, {1, 2}, 2}, oh, ow};
  kiln_attr config[8];
  kts_rng rng;
  kiln_tensor *x = NULL, *weight = NULL, *out = NULL;
  kiln_module* m;
  config[0] = kiln_attr_int("in_channels", 4);
  config[1] = kiln_attr_int("out_channels", 6);
  config[2] = kiln_attr_ints("kernel_size", kernel, 2);
  config[3] = kiln_attr_ints("stride", stride, 1);
  config[4] = kiln_attr_ints("padding", padding, 2);
  config[5] = kiln_attr_ints("output_padding", output_padding, 2);
  config[6] = kiln_attr_int("groups", 2);
  config[7] = kiln_attr_ints("dilation", dilation, 2);
  m = make_module(rt, "ConvTranspose2d", config, 8, 1);
  if (!m) return;
  weight = kts_parameter(m, "weight");
  CHECK(weight && has_shape(weight, weight_shape, 4));
  kts_rng_seed(&rng, 6);
  randomize_parameter(rt, m, "bias", &rng);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 4, -1.0, 1.0, &x));
  CHECK_OK(kiln_module_forward1(m, &x, 1, &out));
  CHECK(out && has_shape(out, out_shape, 4));
  kiln_tensor_release(out);
  {
    const int64_t n_out = 2 * 6 * oh * ow;
    check_weighted_forward("ConvTranspose2d forward", m, x, n_out, transposed_reference, &t);
  }
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  kiln_tensor_release(weight);
  kiln_tensor_release(x);
  kiln_module_release(m);
}

static void test_config_errors(kiln_runtime* rt) {
  const int64_t kernel[1] = {3}, two[1] = {2};
  kiln_module* m = NULL;
  kiln_attr config[5];
  config[0] = kiln_attr_int("in_channels", 4);
  config[1] = kiln_attr_int("out_channels", 6);
  config[2] = kiln_attr_ints("kernel_size", kernel, 1);
  config[3] = kiln_attr_ints("output_padding", two, 1);
  config[4] = kiln_attr_ints("stride", two, 1);
  CHECK_ERROR(kiln_module_create(rt, "ConvTranspose2d", config, 4, &m), KILN_ERR_INVALID_ARGUMENT,
              "ConvTranspose2d", "output_padding [2, 2] must be smaller than stride [1, 1] or dilation [1, 1]");
  CHECK_ERROR(kiln_module_create(rt, "ConvTranspose2d", config, 5, &m), KILN_ERR_INVALID_ARGUMENT,
              "ConvTranspose2d", "output_padding [2, 2] must be smaller than stride [2, 2] or dilation [1, 1]");
  /* Below the dilation is enough, as in PyTorch. */
  config[4] = kiln_attr_ints("dilation", kernel, 1);
  CHECK_OK(kiln_module_create(rt, "ConvTranspose2d", config, 5, &m));
  kiln_module_release(m);
  m = NULL;
  config[3] = kiln_attr_int("groups", 4);
  CHECK_ERROR(kiln_module_create(rt, "ConvTranspose2d", config, 4, &m), KILN_ERR_INVALID_ARGUMENT, "groups = 4",
              "out_channels (6)");
  CHECK(m == NULL);
}

int main(void) {
  kiln_runtime* rt = layer_test_runtime();
  test_conv_transpose2d(rt);
  test_config_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/conv_transpose");
}
