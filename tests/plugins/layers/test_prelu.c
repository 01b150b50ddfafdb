/* PReLU (one slope, and one per channel): forward against plain loops,
 * gradients against finite differences, configuration and input errors. */
#include "layer_test.h"

enum { N = 2, C = 3, L = 4, SIZE = N * C * L };

static void test_prelu(kiln_runtime* rt, kiln_tensor* x, const double* xs, int64_t slopes, kts_rng* rng) {
  kiln_attr config = kiln_attr_int("num_parameters", slopes);
  kiln_module* m = make_module(rt, "PReLU", &config, 1, 1);
  double *w, *got, want[SIZE];
  int64_t i;
  if (!m) return;
  w = parameter_values(m, "weight");
  if (w) CHECK(w[0] == 0.25 && w[slopes - 1] == 0.25);
  free(w);
  randomize_parameter(rt, m, "weight", rng);
  w = parameter_values(m, "weight");
  got = forward_values(m, &x, 1);
  if (w && got) {
    for (i = 0; i < SIZE; ++i) want[i] = xs[i] > 0 ? xs[i] : w[slopes == 1 ? 0 : (i / L) % C] * xs[i];
    CHECK(kts_compare("PReLU", got, want, SIZE, FORWARD_ATOL, FORWARD_RTOL) == 0);
  }
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  free(w);
  free(got);
  kiln_module_release(m);
}

static void test_errors(kiln_runtime* rt, kiln_tensor* x) {
  kiln_attr config = kiln_attr_int("num_parameters", 0);
  kiln_module *bad = NULL, *m;
  kiln_tensor* y = NULL;
  CHECK_ERROR(kiln_module_create(rt, "PReLU", &config, 1, &bad), KILN_ERR_INVALID_ARGUMENT, "PReLU",
              "num_parameters", ">= 1");
  config = kiln_attr_int("num_parameters", 5);
  m = make_module(rt, "PReLU", &config, 1, 1);
  if (m) CHECK_ERROR(kiln_module_forward1(m, &x, 1, &y), KILN_ERR_SHAPE_MISMATCH, "prelu", "weight of shape [5]");
  CHECK(bad == NULL && y == NULL);
  kiln_module_release(m);
}

int main(void) {
  const int64_t shape[3] = {N, C, L};
  kiln_runtime* rt = NULL;
  kiln_tensor* x = NULL;
  double* xs = NULL;
  kts_rng rng;
  if (kts_runtime_create(1, &rt) != KILN_OK) {
    fprintf(stderr, "runtime: %s\n", kiln_last_error());
    return 1;
  }
  kts_rng_seed(&rng, 51);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 3, -1.0, 1.0, &x));
  xs = x ? kts_read(x) : NULL;
  if (xs) {
    test_prelu(rt, x, xs, 1, &rng);
    test_prelu(rt, x, xs, C, &rng);
    test_errors(rt, x);
  }
  free(xs);
  kiln_tensor_release(x);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/prelu");
}
