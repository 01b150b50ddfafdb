/* The initialisers, through the layers that use them: the bounds, mean and
 * standard deviation of large drawn tensors against PyTorch's definitions,
 * the constant ones, and reproducibility from the runtime's seed. */
#include <math.h>

#include "layer_test.h"

enum { IN = 300, OUT = 400 };

typedef struct moments {
  double mean, std, max_abs;
  int64_t n;
} moments;

static moments moments_of(const double* v, int64_t n) {
  moments m = {0, 0, 0, n};
  int64_t i;
  for (i = 0; i < n; ++i) {
    m.mean += v[i];
    if (fabs(v[i]) > m.max_abs) m.max_abs = fabs(v[i]);
  }
  m.mean /= (double)n;
  for (i = 0; i < n; ++i) m.std += (v[i] - m.mean) * (v[i] - m.mean);
  m.std = sqrt(m.std / (double)(n - 1));
  return m;
}

/* Zero mean (within 5 standard errors), the expected standard deviation
 * (within 2%), and for a uniform draw, every value within its bound (which
 * the largest comes within 1% of). */
static void check_distribution(const char* what, const double* v, int64_t n, double std, double uniform_bound) {
  const moments m = moments_of(v, n);
  const int mean_ok = fabs(m.mean) < 5 * std / sqrt((double)n);
  const int std_ok = fabs(m.std - std) < 0.02 * std;
  const int bound_ok = uniform_bound <= 0 || (m.max_abs <= uniform_bound && m.max_abs > 0.99 * uniform_bound);
  if (!mean_ok || !std_ok || !bound_ok)
    fprintf(stderr, "%s: mean %g, std %g (expected %g), max |value| %g (bound %g)\n", what, m.mean, m.std, std,
            m.max_abs, uniform_bound);
  CHECK(mean_ok && std_ok && bound_ok);
}

static void check_constant(const char* what, const double* v, int64_t n, double value) {
  int64_t i, wrong = 0;
  for (i = 0; i < n; ++i) wrong += v[i] != value;
  if (wrong) fprintf(stderr, "%s: %lld values differ from %g\n", what, (long long)wrong, value);
  CHECK(wrong == 0);
}

static double* linear_parameter(kiln_runtime* rt, const char* init, const char* name) {
  kiln_attr config[3];
  kiln_module* m;
  double* values;
  config[0] = kiln_attr_int("in_features", IN);
  config[1] = kiln_attr_int("out_features", OUT);
  config[2] = kiln_attr_string("init", init);
  m = make_module(rt, "Linear", config, 3, 0);
  values = m ? parameter_values(m, name) : NULL;
  kiln_module_release(m);
  return values;
}

static void test_linear_initialisers(kiln_runtime* rt) {
  const double kaiming_bound = 1 / sqrt((double)IN), xavier_bound = sqrt(6.0 / (IN + OUT));
  const struct {
    const char* init;
    double std, bound; /* bound 0: a normal draw */
  } cases[] = {{"kaiming_uniform", kaiming_bound / sqrt(3.0), kaiming_bound},
               {"kaiming_normal", sqrt(2.0 / IN), 0},
               {"xavier_uniform", xavier_bound / sqrt(3.0), xavier_bound},
               {"xavier_normal", sqrt(2.0 / (IN + OUT)), 0},
               {"normal", 1.0, 0}};
  size_t i;
  double* v;
  for (i = 0; i < COUNT(cases); ++i) {
    v = linear_parameter(rt, cases[i].init, "weight");
    if (v) check_distribution(cases[i].init, v, IN * OUT, cases[i].std, cases[i].bound);
    free(v);
  }
  v = linear_parameter(rt, "zeros", "weight");
  if (v) check_constant("zeros", v, IN * OUT, 0.0);
  free(v);
  v = linear_parameter(rt, "ones", "weight");
  if (v) check_constant("ones", v, IN * OUT, 1.0);
  free(v);
  /* The bias: U(-1/sqrt(in), 1/sqrt(in)) whatever the weight's init;
   * OUT values are few, so only the bound is checked. */
  v = linear_parameter(rt, "zeros", "bias");
  if (v) {
    const moments m = moments_of(v, OUT);
    CHECK(m.max_abs <= kaiming_bound && m.max_abs > 0.9 * kaiming_bound);
  }
  free(v);
}

/* Conv2d's fan_in is in_channels / groups * kh * kw. */
static void test_conv_fan_in(kiln_runtime* rt) {
  const int64_t kernel[2] = {3, 5};
  const double bound = 1 / sqrt(8.0 / 2 * 15);
  kiln_attr config[4];
  kiln_module* m;
  double* v;
  config[0] = kiln_attr_int("in_channels", 8);
  config[1] = kiln_attr_int("out_channels", 2000);
  config[2] = kiln_attr_ints("kernel_size", kernel, 2);
  config[3] = kiln_attr_int("groups", 2);
  m = make_module(rt, "Conv2d", config, 4, 0);
  v = m ? parameter_values(m, "weight") : NULL;
  if (v) check_distribution("Conv2d kaiming_uniform", v, 2000 * 4 * 15, bound / sqrt(3.0), bound);
  free(v);
  kiln_module_release(m);
}

static void test_other_layers(kiln_runtime* rt) {
  kiln_attr config[2];
  kiln_module* m;
  double* v;
  config[0] = kiln_attr_int("num_embeddings", 1000);
  config[1] = kiln_attr_int("embedding_dim", 100);
  m = make_module(rt, "Embedding", config, 2, 0);
  v = m ? parameter_values(m, "weight") : NULL;
  if (v) check_distribution("Embedding N(0, 1)", v, 100000, 1.0, 0);
  free(v);
  kiln_module_release(m);
  config[0] = kiln_attr_int("num_features", 7);
  m = make_module(rt, "BatchNorm2d", config, 1, 0);
  if (m) {
    v = parameter_values(m, "weight");
    if (v) check_constant("BatchNorm2d weight", v, 7, 1.0);
    free(v);
    v = parameter_values(m, "bias");
    if (v) check_constant("BatchNorm2d bias", v, 7, 0.0);
    free(v);
  }
  kiln_module_release(m);
}

/* The same seed gives the same weights; another seed other ones. */
static void test_reproducibility(void) {
  kiln_runtime *a = NULL, *b = NULL, *c = NULL;
  double *wa = NULL, *wb = NULL, *wc = NULL;
  CHECK_OK(kts_runtime_create(5, &a));
  CHECK_OK(kts_runtime_create(5, &b));
  CHECK_OK(kts_runtime_create(6, &c));
  if (a && b && c) {
    wa = linear_parameter(a, "kaiming_uniform", "weight");
    wb = linear_parameter(b, "kaiming_uniform", "weight");
    wc = linear_parameter(c, "kaiming_uniform", "weight");
  }
  if (wa && wb && wc) {
    CHECK(kts_compare("same seed", wb, wa, IN * OUT, 0.0, 0.0) == 0);
    CHECK(wc[0] != wa[0] || wc[1] != wa[1]);
  }
  free(wa);
  free(wb);
  free(wc);
  kiln_runtime_release(a);
  kiln_runtime_release(b);
  kiln_runtime_release(c);
}

int main(void) {
  kiln_runtime* rt = layer_test_runtime();
  test_linear_initialisers(rt);
  test_conv_fan_in(rt);
  test_other_layers(rt);
  test_reproducibility();
  kiln_runtime_release(rt);
  return check_report("plugins/layers/init");
}
