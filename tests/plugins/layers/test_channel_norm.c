/* GroupNorm and InstanceNorm2d: forward against plain loops, gradients
 * against finite differences, configuration and input errors. */
#include <math.h>

#include "layer_test.h"

#define EPS 1e-5

enum { N = 2, C = 6, H = 2, W = 3, SIZE = N * C * H * W };

/* x [N, C, H, W] in `groups` groups of channels, each (sample, group)
 * normalised, then channel c scaled by w[c] and shifted by b[c]. */
static void group_norm_reference(const double* x, int64_t groups, const double* w, const double* b, double* y) {
  const int64_t row = C / groups * H * W;
  int64_t r, k;
  for (r = 0; r < N * groups; ++r) {
    double mean = 0, var = 0;
    for (k = 0; k < row; ++k) mean += x[r * row + k] / (double)row;
    for (k = 0; k < row; ++k) var += (x[r * row + k] - mean) * (x[r * row + k] - mean) / (double)row;
    for (k = 0; k < row; ++k) {
      const int64_t c = (r % groups) * (C / groups) + k / (H * W);
      y[r * row + k] = (x[r * row + k] - mean) / sqrt(var + EPS) * w[c] + b[c];
    }
  }
}

/* The layer of `type` with `config` on x against the reference with
 * `groups`, its weight and bias randomised when it has them. */
static void check_norm(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n, int affine,
                       int64_t groups, kiln_tensor* x, const double* xs, kts_rng* rng) {
  const double ones[C] = {1, 1, 1, 1, 1, 1}, zeros[C] = {0, 0, 0, 0, 0, 0};
  kiln_module* m = make_module(rt, type, config, n, 1);
  double *w = NULL, *b = NULL, *got, want[SIZE];
  size_t count = 99;
  if (!m) return;
  CHECK_OK(kiln_module_parameter_count(m, &count));
  CHECK(count == (affine ? 2u : 0u));
  if (affine) {
    randomize_parameter(rt, m, "weight", rng);
    randomize_parameter(rt, m, "bias", rng);
    w = parameter_values(m, "weight");
    b = parameter_values(m, "bias");
  }
  got = forward_values(m, &x, 1);
  if (got && (!affine || (w && b))) {
    group_norm_reference(xs, groups, affine ? w : ones, affine ? b : zeros, want);
    CHECK(kts_compare(type, got, want, SIZE, FORWARD_ATOL, FORWARD_RTOL) == 0);
  }
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  free(w);
  free(b);
  free(got);
  kiln_module_release(m);
}

static void test_forward(kiln_runtime* rt) {
  const int64_t shape[4] = {N, C, H, W};
  kiln_tensor* x = NULL;
  double* xs = NULL;
  kiln_attr config[3];
  kts_rng rng;
  kts_rng_seed(&rng, 21);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 4, -1.0, 2.0, &x));
  xs = x ? kts_read(x) : NULL;
  if (!xs) return;
  config[0] = kiln_attr_int("num_groups", 3);
  config[1] = kiln_attr_int("num_channels", C);
  check_norm(rt, "GroupNorm", config, 2, 1, 3, x, xs, &rng);
  config[0] = kiln_attr_int("num_groups", 1);
  config[2] = kiln_attr_bool("affine", 0);
  check_norm(rt, "GroupNorm", config, 3, 0, 1, x, xs, &rng);
  config[0] = kiln_attr_int("num_features", C);
  check_norm(rt, "InstanceNorm2d", config, 1, 0, C, x, xs, &rng);
  config[1] = kiln_attr_bool("affine", 1);
  check_norm(rt, "InstanceNorm2d", config, 2, 1, C, x, xs, &rng);
  free(xs);
  kiln_tensor_release(x);
}

static void test_errors(kiln_runtime* rt) {
  const int64_t wrong_channels[4] = {2, 4, 2, 2}, rank3[3] = {2, 6, 4};
  kiln_module *m = NULL, *bad = NULL;
  kiln_tensor *x = NULL, *y = NULL;
  kiln_attr config[2];
  config[0] = kiln_attr_int("num_groups", 4);
  config[1] = kiln_attr_int("num_channels", 6);
  CHECK_ERROR(kiln_module_create(rt, "GroupNorm", config, 2, &bad), KILN_ERR_INVALID_ARGUMENT, "GroupNorm",
              "num_channels = 6", "divisible by num_groups = 4");
  config[0] = kiln_attr_int("num_groups", 0);
  CHECK_ERROR(kiln_module_create(rt, "GroupNorm", config, 2, &bad), KILN_ERR_INVALID_ARGUMENT, "num_groups", ">= 1");
  CHECK_ERROR(kiln_module_create(rt, "GroupNorm", config, 1, &bad), KILN_ERR_INVALID_ARGUMENT, "num_channels");
  config[0] = kiln_attr_int("num_groups", 2);
  m = make_module(rt, "GroupNorm", config, 2, 0);
  CHECK_OK(kiln_tensor_full(rt, wrong_channels, 4, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &x));
  if (m && x)
    CHECK_ERROR(kiln_module_forward1(m, &x, 1, &y), KILN_ERR_SHAPE_MISMATCH, "GroupNorm", "4 channels",
                "num_channels = 6");
  kiln_module_release(m);
  config[0] = kiln_attr_int("num_features", 6);
  m = make_module(rt, "InstanceNorm2d", config, 1, 0);
  if (m && x)
    CHECK_ERROR(kiln_module_forward1(m, &x, 1, &y), KILN_ERR_SHAPE_MISMATCH, "InstanceNorm2d", "4 channels",
                "num_features = 6");
  kiln_tensor_release(x);
  x = NULL;
  CHECK_OK(kiln_tensor_full(rt, rank3, 3, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &x));
  if (m && x) CHECK_ERROR(kiln_module_forward1(m, &x, 1, &y), KILN_ERR_SHAPE_MISMATCH, "[N, C, H, W]", "rank 3");
  config[1] = kiln_attr_float("eps", -1.0);
  CHECK_ERROR(kiln_module_create(rt, "InstanceNorm2d", config, 2, &bad), KILN_ERR_INVALID_ARGUMENT, "eps", "-1");
  CHECK(bad == NULL && y == NULL);
  kiln_module_release(m);
  kiln_tensor_release(x);
}

int main(void) {
  kiln_runtime* rt = layer_test_runtime();
  test_forward(rt);
  test_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/channel_norm");
}
