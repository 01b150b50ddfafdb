/* Upsample: nearest and bilinear by size and by scale_factor against plain
 * loops, gradients against finite differences, configuration errors. */
#include <math.h>

#include "layer_test.h"

enum { N = 1, C = 2, H = 3, W = 4 };

/* PyTorch's source coordinate of output index o along an axis of `in`
 * inputs and `out` outputs; `step` is 1 / scale_factor (0: by size). */
static double source(int64_t o, int64_t in, int64_t out, double step, int linear, int align_corners) {
  double s;
  if (align_corners) return out > 1 ? (double)o * (double)(in - 1) / (double)(out - 1) : 0.0;
  if (step == 0) step = (double)in / (double)out;
  if (!linear) return floor((double)o * step);
  s = ((double)o + 0.5) * step - 0.5;
  return s < 0 ? 0 : s;
}

static void upsample_reference(const double* x, int64_t oh, int64_t ow, double step_h, double step_w, int linear,
                               int align_corners, double* y) {
  int64_t p, i, j;
  for (p = 0; p < N * C; ++p)
    for (i = 0; i < oh; ++i)
      for (j = 0; j < ow; ++j) {
        const double fy = source(i, H, oh, step_h, linear, align_corners);
        const double fx = source(j, W, ow, step_w, linear, align_corners);
        const int64_t y0 = fy < H - 1 ? (int64_t)fy : H - 1, x0 = fx < W - 1 ? (int64_t)fx : W - 1;
        const int64_t y1 = y0 + 1 < H ? y0 + 1 : y0, x1 = x0 + 1 < W ? x0 + 1 : x0;
        const double ly = linear ? fy - (double)y0 : 0, lx = linear ? fx - (double)x0 : 0;
        const double* plane = x + p * H * W;
        y[(p * oh + i) * ow + j] = (1 - ly) * ((1 - lx) * plane[y0 * W + x0] + lx * plane[y0 * W + x1]) +
                                   ly * ((1 - lx) * plane[y1 * W + x0] + lx * plane[y1 * W + x1]);
      }
}

static void check_upsample(kiln_runtime* rt, const kiln_attr* config, size_t n, kiln_tensor* x, const double* xs,
                           int64_t oh, int64_t ow, double step_h, double step_w, int linear, int align_corners) {
  kiln_module* m = make_module(rt, "Upsample", config, n, 1);
  double *got, want[N * C * 8 * 8];
  if (!m) return;
  got = forward_values(m, &x, 1);
  if (got) {
    upsample_reference(xs, oh, ow, step_h, step_w, linear, align_corners, want);
    CHECK(kts_compare("Upsample", got, want, N * C * oh * ow, FORWARD_ATOL, FORWARD_RTOL) == 0);
  }
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  free(got);
  kiln_module_release(m);
}

static void test_forward(kiln_runtime* rt) {
  const int64_t shape[4] = {N, C, H, W}, size[2] = {5, 7};
  const double two[1] = {2.0}, uneven[2] = {1.5, 0.75};
  kiln_tensor* x = NULL;
  double* xs;
  kiln_attr config[3];
  kts_rng rng;
  kts_rng_seed(&rng, 31);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 4, -1.0, 1.0, &x));
  xs = x ? kts_read(x) : NULL;
  if (!xs) return;
  config[0] = kiln_attr_floats("scale_factor", two, 1);
  check_upsample(rt, config, 1, x, xs, 6, 8, 0.5, 0.5, 0, 0);
  config[0] = kiln_attr_ints("size", size, 2);
  check_upsample(rt, config, 1, x, xs, 5, 7, 0, 0, 0, 0);
  config[1] = kiln_attr_string("mode", "bilinear");
  check_upsample(rt, config, 2, x, xs, 5, 7, 0, 0, 1, 0);
  config[2] = kiln_attr_bool("align_corners", 1);
  check_upsample(rt, config, 3, x, xs, 5, 7, 0, 0, 1, 1);
  config[0] = kiln_attr_floats("scale_factor", uneven, 2);
  check_upsample(rt, config, 2, x, xs, 4, 3, 1 / 1.5, 1 / 0.75, 1, 0);
  free(xs);
  kiln_tensor_release(x);
}

static void test_errors(kiln_runtime* rt) {
  const int64_t size[1] = {4}, three[3] = {1, 2, 3};
  const double two[1] = {2.0};
  kiln_module* bad = NULL;
  kiln_attr config[3];
  CHECK_ERROR(kiln_module_create(rt, "Upsample", NULL, 0, &bad), KILN_ERR_INVALID_ARGUMENT, "Upsample",
              "exactly one of size and scale_factor", "neither");
  config[0] = kiln_attr_ints("size", size, 1);
  config[1] = kiln_attr_floats("scale_factor", two, 1);
  CHECK_ERROR(kiln_module_create(rt, "Upsample", config, 2, &bad), KILN_ERR_INVALID_ARGUMENT, "both");
  config[1] = kiln_attr_string("mode", "bicubic");
  CHECK_ERROR(kiln_module_create(rt, "Upsample", config, 2, &bad), KILN_ERR_INVALID_ARGUMENT, "mode", "bicubic",
              "\"nearest\", \"bilinear\"");
  config[1] = kiln_attr_bool("align_corners", 1);
  CHECK_ERROR(kiln_module_create(rt, "Upsample", config, 2, &bad), KILN_ERR_INVALID_ARGUMENT, "align_corners",
              "bilinear");
  config[0] = kiln_attr_ints("size", three, 3);
  CHECK_ERROR(kiln_module_create(rt, "Upsample", config, 1, &bad), KILN_ERR_INVALID_ARGUMENT, "size",
              "1 or 2 values", "got 3");
  CHECK(bad == NULL);
}

int main(void) {
  kiln_runtime* rt = layer_test_runtime();
  test_forward(rt);
  test_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/upsample");
}
