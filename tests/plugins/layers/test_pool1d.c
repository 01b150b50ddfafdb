/* MaxPool1d and AvgPool1d: forward against plain loops, gradients against
 * finite differences, configuration errors. */
#include <math.h>

#include "layer_test.h"

enum { N = 2, C = 3, L = 9 };

/* kernel k, stride s, padding p over x [N, C, L]; the average counts the
 * padding, as count_include_pad = true. */
static void pool1d_reference(int max, const double* x, int64_t k, int64_t s, int64_t p, double* y) {
  const int64_t out = (L + 2 * p - k) / s + 1;
  int64_t r, o, i;
  for (r = 0; r < N * C; ++r)
    for (o = 0; o < out; ++o) {
      double best = -INFINITY, sum = 0;
      for (i = o * s - p; i < o * s - p + k; ++i) {
        if (i < 0 || i >= L) continue;
        best = x[r * L + i] > best ? x[r * L + i] : best;
        sum += x[r * L + i];
      }
      y[r * out + o] = max ? best : sum / (double)k;
    }
}

static void check_layer(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n, kiln_tensor* x,
                        const double* want, int64_t count) {
  kiln_module* m = make_module(rt, type, config, n, 1);
  double* got;
  if (!m) return;
  got = forward_values(m, &x, 1);
  if (got) CHECK(kts_compare(type, got, want, count, FORWARD_ATOL, FORWARD_RTOL) == 0);
  free(got);
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  kiln_module_release(m);
}

static void test_pools(kiln_runtime* rt) {
  const int64_t shape[3] = {N, C, L}, three[1] = {3}, two[1] = {2}, one[1] = {1};
  kiln_tensor* x = NULL;
  double *xs, want[N * C * L];
  kiln_attr config[3];
  kts_rng rng;
  kts_rng_seed(&rng, 41);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 3, -1.0, 1.0, &x));
  xs = x ? kts_read(x) : NULL;
  if (!xs) return;
  config[0] = kiln_attr_ints("kernel_size", three, 1);
  config[1] = kiln_attr_ints("stride", two, 1);
  config[2] = kiln_attr_ints("padding", one, 1);
  pool1d_reference(1, xs, 3, 2, 1, want);
  check_layer(rt, "MaxPool1d", config, 3, x, want, N * C * 5);
  pool1d_reference(0, xs, 3, 2, 1, want);
  check_layer(rt, "AvgPool1d", config, 3, x, want, N * C * 5);
  config[0] = kiln_attr_ints("kernel_size", two, 1);
  pool1d_reference(1, xs, 2, 2, 0, want);
  check_layer(rt, "MaxPool1d", config, 1, x, want, N * C * 4);
  free(xs);
  kiln_tensor_release(x);
}

static void test_errors(kiln_runtime* rt) {
  const int64_t pair[2] = {2, 2}, two[1] = {2}, three[1] = {3};
  kiln_module* bad = NULL;
  kiln_attr config[2];
  config[0] = kiln_attr_ints("kernel_size", pair, 2);
  CHECK_ERROR(kiln_module_create(rt, "MaxPool1d", config, 1, &bad), KILN_ERR_INVALID_ARGUMENT, "MaxPool1d",
              "kernel_size takes one value", "got 2");
  config[0] = kiln_attr_ints("kernel_size", two, 1);
  config[1] = kiln_attr_ints("padding", three, 1);
  CHECK_ERROR(kiln_module_create(rt, "AvgPool1d", config, 2, &bad), KILN_ERR_INVALID_ARGUMENT, "AvgPool1d",
              "padding", "at most half");
  CHECK_ERROR(kiln_module_create(rt, "AvgPool1d", NULL, 0, &bad), KILN_ERR_INVALID_ARGUMENT, "kernel_size");
  CHECK(bad == NULL);
}

int main(void) {
  kiln_runtime* rt = layer_test_runtime();
  test_pools(rt);
  test_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/pool1d");
}
