/* BatchNorm1d, BatchNorm2d and LayerNorm: forward against plain loops in
 * train and eval mode, running statistics as PyTorch keeps them, gradients
 * against finite differences, optional parameters and buffers, errors. */
#include <math.h>

#include "layer_test.h"

#define EPS 1e-5
#define MOMENTUM 0.1

/* x [n, c, inner]: per-channel mean and biased variance. */
static void channel_statistics(const double* x, int64_t n, int64_t c, int64_t inner, double* mean, double* var) {
  int64_t b, ch, k;
  for (ch = 0; ch < c; ++ch) {
    double sum = 0, squares = 0;
    for (b = 0; b < n; ++b)
      for (k = 0; k < inner; ++k) sum += x[(b * c + ch) * inner + k];
    mean[ch] = sum / (double)(n * inner);
    for (b = 0; b < n; ++b)
      for (k = 0; k < inner; ++k) squares += pow(x[(b * c + ch) * inner + k] - mean[ch], 2);
    var[ch] = squares / (double)(n * inner);
  }
}

static void batch_norm_reference(const double* x, int64_t n, int64_t c, int64_t inner, const double* mean,
                                 const double* var, const double* w, const double* bias, double* y) {
  int64_t b, ch, k;
  for (b = 0; b < n; ++b)
    for (ch = 0; ch < c; ++ch)
      for (k = 0; k < inner; ++k) {
        const int64_t i = (b * c + ch) * inner + k;
        y[i] = (x[i] - mean[ch]) / sqrt(var[ch] + EPS) * w[ch] + bias[ch];
      }
}

static double* buffer_values(const kiln_module* m, const char* name) {
  kiln_tensor* t = kts_buffer(m, name);
  double* values = t ? kts_read(t) : NULL;
  CHECK(values != NULL);
  kiln_tensor_release(t);
  return values;
}

/* Train mode twice, then eval mode, on x [n, 3, inner] shaped `shape`. */
static void test_batch_norm(kiln_runtime* rt, const char* type, const int64_t* shape, int rank) {
  enum { C = 3 };
  const int64_t n = shape[0], inner = rank == 2 ? 1 : shape[2] * (rank == 4 ? shape[3] : 1);
  const int64_t count = n * C * inner;
  kiln_attr config = kiln_attr_int("num_features", C);
  kiln_module* m = make_module(rt, type, &config, 1, 1);
  double mean[C], var[C], running_mean[C], running_var[C];
  double *xs = NULL, *w = NULL, *b = NULL, *got = NULL, *want = NULL;
  kiln_tensor *x = NULL, *counter = NULL;
  kts_rng rng;
  int step, ch;
  if (!m) return;
  kts_rng_seed(&rng, 8);
  randomize_parameter(rt, m, "weight", &rng);
  randomize_parameter(rt, m, "bias", &rng);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, rank, -1.0, 2.0, &x));
  xs = x ? kts_read(x) : NULL;
  w = parameter_values(m, "weight");
  b = parameter_values(m, "bias");
  want = malloc((size_t)count * sizeof *want);
  if (!xs || !w || !b || !want) goto done;
  channel_statistics(xs, n, C, inner, mean, var);
  batch_norm_reference(xs, n, C, inner, mean, var, w, b, want);
  for (ch = 0; ch < C; ++ch) {
    running_mean[ch] = 0;
    running_var[ch] = 1;
  }
  for (step = 0; step < 2; ++step) {
    got = forward_values(m, &x, 1);
    if (got) CHECK(kts_compare(type, got, want, count, FORWARD_ATOL, FORWARD_RTOL) == 0);
    free(got);
    for (ch = 0; ch < C; ++ch) {
      const double unbiased = var[ch] * (double)(n * inner) / (double)(n * inner - 1);
      running_mean[ch] = (1 - MOMENTUM) * running_mean[ch] + MOMENTUM * mean[ch];
      running_var[ch] = (1 - MOMENTUM) * running_var[ch] + MOMENTUM * unbiased;
    }
  }
  got = buffer_values(m, "running_mean");
  if (got) CHECK(kts_compare("running_mean", got, running_mean, C, 1e-12, 1e-9) == 0);
  free(got);
  got = buffer_values(m, "running_var");
  if (got) CHECK(kts_compare("running_var", got, running_var, C, 1e-12, 1e-9) == 0);
  free(got);
  counter = kts_buffer(m, "num_batches_tracked");
  if (counter) {
    int64_t batches = -1;
    CHECK_OK(kiln_tensor_read(counter, &batches, sizeof batches));
    CHECK(batches == 2);
  }
  /* Train-mode gradients (the batch statistics depend on every input). */
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  /* Eval mode normalises with the running statistics. */
  CHECK_OK(kiln_module_set_training(m, 0));
  {
    double* rm = buffer_values(m, "running_mean");
    double* rv = buffer_values(m, "running_var");
    if (rm && rv) {
      batch_norm_reference(xs, n, C, inner, rm, rv, w, b, want);
      got = forward_values(m, &x, 1);
      if (got) CHECK(kts_compare("eval mode", got, want, count, FORWARD_ATOL, FORWARD_RTOL) == 0);
      free(got);
    }
    free(rm);
    free(rv);
  }
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
done:
  free(xs);
  free(w);
  free(b);
  free(want);
  kiln_tensor_release(counter);
  kiln_tensor_release(x);
  kiln_module_release(m);
}

/* affine = false: no parameters; track_running_stats = false: no buffers,
 * and eval mode normalises with the batch's statistics. */
static void test_batch_norm_options(kiln_runtime* rt) {
  const int64_t shape[2] = {6, 2};
  kiln_attr config[3];
  kiln_module* m;
  kiln_tensor* x = NULL;
  size_t count = 99;
  kts_rng rng;
  config[0] = kiln_attr_int("num_features", 2);
  config[1] = kiln_attr_bool("affine", 0);
  config[2] = kiln_attr_bool("track_running_stats", 0);
  m = make_module(rt, "BatchNorm1d", config, 3, 1);
  if (!m) return;
  CHECK_OK(kiln_module_parameter_count(m, &count));
  CHECK(count == 0);
  CHECK_OK(kiln_module_buffer_count(m, &count));
  CHECK(count == 0);
  kts_rng_seed(&rng, 9);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 2, -1.0, 1.0, &x));
  if (x) {
    double* train = forward_values(m, &x, 1);
    double* eval = NULL;
    CHECK_OK(kiln_module_set_training(m, 0));
    eval = forward_values(m, &x, 1);
    if (train && eval) CHECK(kts_compare("eval without running statistics", eval, train, 12, 1e-12, 0) == 0);
    free(train);
    free(eval);
  }
  kiln_tensor_release(x);
  kiln_module_release(m);
}

static void test_layer_norm(kiln_runtime* rt) {
  const int64_t normalized[2] = {3, 4}, shape[3] = {2, 3, 4};
  kiln_attr config = kiln_attr_ints("normalized_shape", normalized, 2);
  kiln_module* m = make_module(rt, "LayerNorm", &config, 1, 1);
  kiln_tensor* x = NULL;
  double *xs, *w, *b, *got, want[24];
  kts_rng rng;
  if (!m) return;
  kts_rng_seed(&rng, 10);
  randomize_parameter(rt, m, "weight", &rng);
  randomize_parameter(rt, m, "bias", &rng);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 3, -1.0, 2.0, &x));
  xs = x ? kts_read(x) : NULL;
  w = parameter_values(m, "weight");
  b = parameter_values(m, "bias");
  got = x ? forward_values(m, &x, 1) : NULL;
  if (xs && w && b && got) {
    layer_norm_reference(xs, 2, 12, w, b, EPS, want);
    CHECK(kts_compare("LayerNorm", got, want, 24, FORWARD_ATOL, FORWARD_RTOL) == 0);
  }
  if (x) CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  free(xs);
  free(w);
  free(b);
  free(got);
  kiln_tensor_release(x);
  kiln_module_release(m);
}

static void test_errors(kiln_runtime* rt) {
  const int64_t wrong_channels[2] = {4, 2}, rank3[3] = {2, 3, 4}, zero_dim[2] = {3, 0};
  kiln_module *m = NULL, *bad = NULL;
  kiln_tensor *x = NULL, *y = NULL;
  kiln_attr config[2];
  config[0] = kiln_attr_int("num_features", 0);
  CHECK_ERROR(kiln_module_create(rt, "BatchNorm2d", config, 1, &bad), KILN_ERR_INVALID_ARGUMENT, "num_features",
              ">= 1");
  config[0] = kiln_attr_int("num_features", 3);
  config[1] = kiln_attr_float("momentum", 1.5);
  CHECK_ERROR(kiln_module_create(rt, "BatchNorm1d", config, 2, &bad), KILN_ERR_INVALID_ARGUMENT, "momentum",
              "[0, 1]", "1.5");
  m = make_module(rt, "BatchNorm1d", config, 1, 0);
  CHECK_OK(kiln_tensor_full(rt, wrong_channels, 2, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &x));
  if (m && x)
    CHECK_ERROR(kiln_module_forward1(m, &x, 1, &y), KILN_ERR_SHAPE_MISMATCH, "2 channels", "num_features = 3");
  kiln_module_release(m);
  kiln_tensor_release(x);
  x = NULL;
  m = make_module(rt, "BatchNorm2d", config, 1, 0);
  CHECK_OK(kiln_tensor_full(rt, rank3, 3, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &x));
  if (m && x) CHECK_ERROR(kiln_module_forward1(m, &x, 1, &y), KILN_ERR_SHAPE_MISMATCH, "[N, C, H, W]", "rank 3");
  config[0] = kiln_attr_ints("normalized_shape", NULL, 0);
  CHECK_ERROR(kiln_module_create(rt, "LayerNorm", config, 1, &bad), KILN_ERR_INVALID_ARGUMENT, "normalized_shape",
              "1 to 8 dims", "got 0");
  config[0] = kiln_attr_ints("normalized_shape", zero_dim, 2);
  CHECK_ERROR(kiln_module_create(rt, "LayerNorm", config, 1, &bad), KILN_ERR_INVALID_ARGUMENT, "normalized_shape",
              ">= 1");
  CHECK(bad == NULL && y == NULL);
  kiln_module_release(m);
  kiln_tensor_release(x);
}

int main(void) {
  const int64_t flat[2] = {5, 3}, sequence[3] = {4, 3, 2}, image[4] = {2, 3, 2, 3};
  kiln_runtime* rt = layer_test_runtime();
  test_batch_norm(rt, "BatchNorm1d", flat, 2);
  test_batch_norm(rt, "BatchNorm1d", sequence, 3);
  test_batch_norm(rt, "BatchNorm2d", image, 4);
  test_batch_norm_options(rt);
  test_layer_norm(rt);
  test_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/norm");
}
