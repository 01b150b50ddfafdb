/* Dropout: identity in eval mode (and with p = 0), in train mode a zero
 * fraction close to p with the kept values scaled by 1 / (1 - p), gradients
 * with a fixed mask, and the range of p. */
#include <math.h>

#include "layer_test.h"

enum { N_LARGE = 200000 };

static void test_statistics(kiln_runtime* rt, kiln_tensor* x, const double* xs) {
  const double p = 0.3;
  kiln_attr config = kiln_attr_float("p", p);
  kiln_module* m = make_module(rt, "Dropout", &config, 1, 1);
  double* got;
  int64_t i, zeros = 0, wrong_scale = 0;
  if (!m) return;
  got = forward_values(m, &x, 1);
  for (i = 0; got && i < N_LARGE; ++i) {
    if (got[i] == 0.0)
      ++zeros;
    else if (fabs(got[i] - xs[i] / (1 - p)) > 1e-12)
      ++wrong_scale;
  }
  /* The standard deviation of the zero fraction is sqrt(p (1 - p) / n) ~ 0.001. */
  CHECK(got && fabs((double)zeros / N_LARGE - p) < 0.005);
  CHECK(wrong_scale == 0);
  free(got);
  /* Eval mode: the input, unchanged. */
  CHECK_OK(kiln_module_set_training(m, 0));
  got = forward_values(m, &x, 1);
  if (got) CHECK(kts_compare("Dropout in eval mode", got, xs, N_LARGE, 0.0, 0.0) == 0);
  free(got);
  kiln_module_release(m);
  /* p = 0 in train mode: the input too. */
  config = kiln_attr_float("p", 0.0);
  m = make_module(rt, "Dropout", &config, 1, 1);
  if (!m) return;
  got = forward_values(m, &x, 1);
  if (got) CHECK(kts_compare("Dropout with p = 0", got, xs, N_LARGE, 0.0, 0.0) == 0);
  free(got);
  kiln_module_release(m);
}

/* Two forwards after the same seed drop the same elements; the gradient
 * (mask / (1 - p)) then matches finite differences. */
static void test_gradients(kiln_runtime* rt) {
  const int64_t shape[2] = {4, 5};
  kiln_attr config = kiln_attr_float("p", 0.4);
  kiln_module* m = make_module(rt, "Dropout", &config, 1, 1);
  kts_gradcheck_options options = kts_gradcheck_defaults();
  kiln_tensor* x = NULL;
  double *first = NULL, *second = NULL;
  kts_rng rng;
  if (!m) return;
  kts_rng_seed(&rng, 6);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 2, -1.0, 1.0, &x));
  CHECK_OK(kiln_manual_seed(rt, 99));
  first = forward_values(m, &x, 1);
  CHECK_OK(kiln_manual_seed(rt, 99));
  second = forward_values(m, &x, 1);
  if (first && second) CHECK(kts_compare("Dropout after the same seed", second, first, 20, 0.0, 0.0) == 0);
  options.reseed = 1;
  options.seed = 99;
  CHECK_GRADIENTS(rt, m, &x, 1, &options);
  free(first);
  free(second);
  kiln_tensor_release(x);
  kiln_module_release(m);
}

static void test_config_errors(kiln_runtime* rt) {
  kiln_module* m = NULL;
  kiln_attr config = kiln_attr_float("p", 1.0);
  CHECK_ERROR(kiln_module_create(rt, "Dropout", &config, 1, &m), KILN_ERR_INVALID_ARGUMENT, "p must be in [0, 1)",
              "got 1");
  config = kiln_attr_float("p", -0.1);
  CHECK_ERROR(kiln_module_create(rt, "Dropout", &config, 1, &m), KILN_ERR_INVALID_ARGUMENT, "p must be in [0, 1)",
              "got -0.1");
  CHECK(m == NULL);
}

int main(void) {
  const int64_t shape[1] = {N_LARGE};
  kiln_runtime* rt = NULL;
  kiln_tensor* x = NULL;
  double* xs = NULL;
  kts_rng rng;
  if (kts_runtime_create(1, &rt) != KILN_OK) {
    fprintf(stderr, "runtime: %s\n", kiln_last_error());
    return 1;
  }
  /* Values in [0.5, 1.5]: never zero, so a zero output is a dropped one. */
  kts_rng_seed(&rng, 7);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 1, 0.5, 1.5, &x));
  if (x) xs = kts_read(x);
  if (xs) test_statistics(rt, x, xs);
  test_gradients(rt);
  test_config_errors(rt);
  free(xs);
  kiln_tensor_release(x);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/dropout");
}
