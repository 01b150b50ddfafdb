/* MaxPool2d, AvgPool2d, AdaptiveAvgPool2d and Flatten: forward against
 * plain loops, gradients against finite differences, configuration errors. */
#include <math.h>

#include "layer_test.h"

enum { N = 2, C = 3, H = 6, W = 7 };

typedef enum { POOL_MAX, POOL_AVG_WITH_PAD, POOL_AVG_WITHOUT_PAD } pool_kind;

/* kernel k, stride s, padding p (both dims) over x [N, C, H, W]. */
static void pool_reference(pool_kind kind, const double* x, int64_t k, int64_t s, int64_t p, double* y) {
  const int64_t oh = (H + 2 * p - k) / s + 1, ow = (W + 2 * p - k) / s + 1;
  int64_t plane, i, j, a, b;
  for (plane = 0; plane < N * C; ++plane)
    for (i = 0; i < oh; ++i)
      for (j = 0; j < ow; ++j) {
        double max = -INFINITY, sum = 0;
        int64_t inside = 0;
        for (a = i * s - p; a < i * s - p + k; ++a)
          for (b = j * s - p; b < j * s - p + k; ++b) {
            double v;
            if (a < 0 || a >= H || b < 0 || b >= W) continue;
            v = x[(plane * H + a) * W + b];
            max = v > max ? v : max;
            sum += v;
            ++inside;
          }
        y[(plane * oh + i) * ow + j] =
            kind == POOL_MAX ? max : sum / (double)(kind == POOL_AVG_WITH_PAD ? k * k : inside);
      }
}

static void adaptive_reference(const double* x, int64_t oh, int64_t ow, double* y) {
  int64_t plane, i, j, a, b;
  for (plane = 0; plane < N * C; ++plane)
    for (i = 0; i < oh; ++i)
      for (j = 0; j < ow; ++j) {
        const int64_t h0 = i * H / oh, h1 = ((i + 1) * H + oh - 1) / oh;
        const int64_t w0 = j * W / ow, w1 = ((j + 1) * W + ow - 1) / ow;
        double sum = 0;
        for (a = h0; a < h1; ++a)
          for (b = w0; b < w1; ++b) sum += x[(plane * H + a) * W + b];
        y[(plane * oh + i) * ow + j] = sum / (double)((h1 - h0) * (w1 - w0));
      }
}

/* Runs `type` with `config` on x and compares with `want` (n values), then
 * checks its gradients. */
static void check_layer(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n_config, kiln_tensor* x,
                        const double* want, int64_t n) {
  kiln_module* m = make_module(rt, type, config, n_config, 1);
  double* got;
  if (!m) return;
  got = forward_values(m, &x, 1);
  if (got) CHECK(kts_compare(type, got, want, n, FORWARD_ATOL, FORWARD_RTOL) == 0);
  free(got);
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  kiln_module_release(m);
}

static void test_pools(kiln_runtime* rt, kiln_tensor* x, const double* xs) {
  const int64_t three[1] = {3}, two[1] = {2}, one[1] = {1}, output_size[2] = {4, 3};
  double want[N * C * H * W];
  kiln_attr config[4];
  /* Max: kernel 3, stride 2, padding 1; and kernel 2 with the default stride. */
  config[0] = kiln_attr_ints("kernel_size", three, 1);
  config[1] = kiln_attr_ints("stride", two, 1);
  config[2] = kiln_attr_ints("padding", one, 1);
  pool_reference(POOL_MAX, xs, 3, 2, 1, want);
  check_layer(rt, "MaxPool2d", config, 3, x, want, N * C * 3 * 4);
  config[0] = kiln_attr_ints("kernel_size", two, 1);
  pool_reference(POOL_MAX, xs, 2, 2, 0, want);
  check_layer(rt, "MaxPool2d", config, 1, x, want, N * C * 3 * 3);
  /* Average with and without the padding counted. */
  config[0] = kiln_attr_ints("kernel_size", three, 1);
  config[3] = kiln_attr_bool("count_include_pad", 1);
  pool_reference(POOL_AVG_WITH_PAD, xs, 3, 2, 1, want);
  check_layer(rt, "AvgPool2d", config, 4, x, want, N * C * 3 * 4);
  config[3] = kiln_attr_bool("count_include_pad", 0);
  pool_reference(POOL_AVG_WITHOUT_PAD, xs, 3, 2, 1, want);
  check_layer(rt, "AvgPool2d", config, 4, x, want, N * C * 3 * 4);
  /* Adaptive: uneven bins over 6 x 7. */
  config[0] = kiln_attr_ints("output_size", output_size, 2);
  adaptive_reference(xs, 4, 3, want);
  check_layer(rt, "AdaptiveAvgPool2d", config, 1, x, want, N * C * 4 * 3);
}

/* Flatten keeps the values in order and merges start_dim..end_dim. */
static void test_flatten(kiln_runtime* rt, kiln_tensor* x, const double* xs) {
  const int64_t merged_all[2] = {N, C * H * W}, merged_middle[3] = {N, C * H, W}, merged_every[1] = {N * C * H * W};
  kiln_attr config[2];
  kiln_module* m;
  kiln_tensor* y = NULL;
  m = make_module(rt, "Flatten", NULL, 0, 1);
  if (m) {
    CHECK_OK(kiln_module_forward1(m, &x, 1, &y));
    CHECK(y && has_shape(y, merged_all, 2));
    if (y) CHECK(kts_compare_tensor("Flatten", y, xs, N * C * H * W, 0.0, 0.0) == 0);
    kiln_tensor_release(y);
    y = NULL;
    CHECK_GRADIENTS(rt, m, &x, 1, NULL);
    kiln_module_release(m);
  }
  config[0] = kiln_attr_int("start_dim", 1);
  config[1] = kiln_attr_int("end_dim", 2);
  m = make_module(rt, "Flatten", config, 2, 1);
  if (m) {
    CHECK_OK(kiln_module_forward1(m, &x, 1, &y));
    CHECK(y && has_shape(y, merged_middle, 3));
    kiln_tensor_release(y);
    y = NULL;
    kiln_module_release(m);
  }
  config[0] = kiln_attr_int("start_dim", -4);
  m = make_module(rt, "Flatten", config, 1, 1);
  if (m) {
    CHECK_OK(kiln_module_forward1(m, &x, 1, &y));
    CHECK(y && has_shape(y, merged_every, 1));
    kiln_tensor_release(y);
    y = NULL;
    kiln_module_release(m);
  }
  config[0] = kiln_attr_int("start_dim", 2);
  config[1] = kiln_attr_int("end_dim", 1);
  m = make_module(rt, "Flatten", config, 2, 1);
  if (m) {
    CHECK_ERROR(kiln_module_forward1(m, &x, 1, &y), KILN_ERR_SHAPE_MISMATCH, "start_dim = 2", "end_dim = 1",
                "rank 4");
    kiln_module_release(m);
  }
  CHECK(y == NULL);
}

static void test_config_errors(kiln_runtime* rt) {
  const int64_t three[3] = {3, 3, 3}, two[1] = {2}, zero[1] = {0}, wide_padding[1] = {2};
  kiln_module* m = NULL;
  kiln_attr config[3];
  config[0] = kiln_attr_ints("kernel_size", three, 3);
  CHECK_ERROR(kiln_module_create(rt, "MaxPool2d", config, 1, &m), KILN_ERR_INVALID_ARGUMENT, "kernel_size",
              "1 or 2 values", "got 3");
  CHECK_ERROR(kiln_module_create(rt, "AvgPool2d", config, 1, &m), KILN_ERR_INVALID_ARGUMENT, "kernel_size");
  config[0] = kiln_attr_ints("kernel_size", two, 1);
  config[1] = kiln_attr_ints("stride", zero, 1);
  CHECK_ERROR(kiln_module_create(rt, "MaxPool2d", config, 2, &m), KILN_ERR_INVALID_ARGUMENT, "stride", ">= 1");
  config[1] = kiln_attr_ints("padding", wide_padding, 1);
  CHECK_ERROR(kiln_module_create(rt, "AvgPool2d", config, 2, &m), KILN_ERR_INVALID_ARGUMENT, "padding 2x2",
              "at most half of kernel_size 2x2");
  config[0] = kiln_attr_ints("output_size", zero, 1);
  CHECK_ERROR(kiln_module_create(rt, "AdaptiveAvgPool2d", config, 1, &m), KILN_ERR_INVALID_ARGUMENT, "output_size",
              ">= 1");
  CHECK(m == NULL);
}

int main(void) {
  const int64_t shape[4] = {N, C, H, W};
  kiln_runtime* rt = NULL;
  kiln_tensor* x = NULL;
  double* xs = NULL;
  kts_rng rng;
  if (kts_runtime_create(1, &rt) != KILN_OK) {
    fprintf(stderr, "runtime: %s\n", kiln_last_error());
    return 1;
  }
  kts_rng_seed(&rng, 4);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 4, -1.0, 1.0, &x));
  if (x) xs = kts_read(x);
  if (xs) {
    test_pools(rt, x, xs);
    test_flatten(rt, x, xs);
  }
  test_config_errors(rt);
  free(xs);
  kiln_tensor_release(x);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/pool");
}
