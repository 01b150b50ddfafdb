/* ReLU, LeakyReLU, GELU (exact and tanh), SiLU, Tanh, Sigmoid, Softplus,
 * Hardswish, Mish, Identity and Softmax:
 * forward against the formulas, gradients against finite differences. */
#include <math.h>

#include "layer_test.h"

enum { N_VALUES = 2 * 3 * 4 };

static double relu(double x) { return x > 0 ? x : 0; }
static double leaky_relu_02(double x) { return x > 0 ? x : 0.2 * x; }
static double gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double gelu_tanh(double x) {
  return 0.5 * x * (1 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}
static double sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double silu(double x) { return x * sigmoid(x); }
static double softplus_beta2(double x) { return log(1 + exp(2 * x)) / 2; }
static double hardswish(double x) { return x * (x < -3 ? 0 : x > 3 ? 1 : (x + 3) / 6); }
static double mish(double x) { return x * tanh(log(1 + exp(x))); }
static double identity(double x) { return x; }

typedef struct activation_case {
  const char* type;
  kiln_attr config[1];
  size_t n_config;
  double (*reference)(double);
} activation_case;

static void test_activation(kiln_runtime* rt, const activation_case* c, kiln_tensor* x, const double* xs) {
  kiln_module* m = make_module(rt, c->type, c->config, c->n_config, 1);
  double want[N_VALUES];
  double* got;
  int i;
  if (!m) return;
  for (i = 0; i < N_VALUES; ++i) want[i] = c->reference(xs[i]);
  got = forward_values(m, &x, 1);
  if (got) CHECK(kts_compare(c->type, got, want, N_VALUES, 1e-12, 1e-9) == 0);
  free(got);
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  kiln_module_release(m);
}

/* Softmax over dim 1 of [2, 3, 4]: every slice sums to 1, and the values
 * are exp(x) / sum exp(x) along the slice. */
static void test_softmax(kiln_runtime* rt, kiln_tensor* x, const double* xs) {
  kiln_attr config = kiln_attr_int("dim", 1);
  kiln_module* m = make_module(rt, "Softmax", &config, 1, 1);
  double want[N_VALUES], sums[2 * 4] = {0};
  const double ones[2 * 4] = {1, 1, 1, 1, 1, 1, 1, 1};
  double* got;
  int n, c, k;
  if (!m) return;
  for (n = 0; n < 2; ++n)
    for (k = 0; k < 4; ++k) {
      double total = 0;
      for (c = 0; c < 3; ++c) total += exp(xs[(n * 3 + c) * 4 + k]);
      for (c = 0; c < 3; ++c) want[(n * 3 + c) * 4 + k] = exp(xs[(n * 3 + c) * 4 + k]) / total;
    }
  got = forward_values(m, &x, 1);
  if (got) {
    for (n = 0; n < 2; ++n)
      for (c = 0; c < 3; ++c)
        for (k = 0; k < 4; ++k) sums[n * 4 + k] += got[(n * 3 + c) * 4 + k];
    CHECK(kts_compare("Softmax slice sums", sums, ones, 8, 1e-12, 0) == 0);
    CHECK(kts_compare("Softmax", got, want, N_VALUES, 1e-12, 1e-9) == 0);
  }
  free(got);
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  kiln_module_release(m);
}

static void test_config_errors(kiln_runtime* rt) {
  kiln_module* m = NULL;
  kiln_attr config = kiln_attr_string("approximate", "sigmoid");
  CHECK_ERROR(kiln_module_create(rt, "GELU", &config, 1, &m), KILN_ERR_INVALID_ARGUMENT, "approximate",
              "\"none\", \"tanh\"", "got \"sigmoid\"");
  CHECK(m == NULL);
}

int main(void) {
  const int64_t shape[3] = {2, 3, 4};
  activation_case cases[11];
  double values[N_VALUES];
  kiln_runtime* rt = NULL;
  kiln_tensor* x = NULL;
  kts_rng rng;
  size_t i;
  if (kts_runtime_create(1, &rt) != KILN_OK) {
    fprintf(stderr, "runtime: %s\n", kiln_last_error());
    return 1;
  }
  /* Values in [-2, 2] kept 0.05 away from the kink of ReLU at 0, where a
   * finite difference would straddle it. */
  kts_rng_seed(&rng, 5);
  for (i = 0; i < N_VALUES; ++i) {
    const double v = kts_rng_uniform(&rng, -2.0, 2.0);
    values[i] = fabs(v) < 0.05 ? v + (v < 0 ? -0.05 : 0.05) : v;
  }
  CHECK_OK(kts_tensor_f64(rt, values, shape, 3, &x));
  cases[0] = (activation_case){"ReLU", {{0}}, 0, relu};
  cases[1] = (activation_case){"LeakyReLU", {{0}}, 1, leaky_relu_02};
  cases[1].config[0] = kiln_attr_float("negative_slope", 0.2);
  cases[2] = (activation_case){"GELU", {{0}}, 0, gelu};
  cases[3] = (activation_case){"GELU", {{0}}, 1, gelu_tanh};
  cases[3].config[0] = kiln_attr_string("approximate", "tanh");
  cases[4] = (activation_case){"SiLU", {{0}}, 0, silu};
  cases[5] = (activation_case){"Tanh", {{0}}, 0, tanh};
  cases[6] = (activation_case){"Sigmoid", {{0}}, 0, sigmoid};
  cases[7] = (activation_case){"Softplus", {{0}}, 1, softplus_beta2};
  cases[7].config[0] = kiln_attr_float("beta", 2.0);
  cases[8] = (activation_case){"Hardswish", {{0}}, 0, hardswish};
  cases[9] = (activation_case){"Mish", {{0}}, 0, mish};
  cases[10] = (activation_case){"Identity", {{0}}, 0, identity};
  if (x) {
    for (i = 0; i < COUNT(cases); ++i) test_activation(rt, &cases[i], x, values);
    test_softmax(rt, x, values);
  }
  test_config_errors(rt);
  kiln_tensor_release(x);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/activation");
}
