/* The gradient checker: backward against central finite differences of
 * sum(w * output 0) for fixed random weights w (random, not ones, so that a
 * layer whose outputs sum to a constant, such as Softmax, still has a
 * gradient to check). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kiln_test_support.h"

kts_gradcheck_options kts_gradcheck_defaults(void) {
  kts_gradcheck_options o;
  o.eps = 1e-6;
  o.atol = 1e-5;
  o.rtol = 1e-3;
  o.reseed = 0;
  o.seed = 0;
  return o;
}

/* A tensor whose gradient is checked, with the name it is reported by. */
typedef struct checked {
  kiln_tensor* tensor;
  int is_input; /* made to require grad here, and set back afterwards */
  char name[96];
} checked;

typedef struct gradcheck {
  kiln_runtime* rt;
  kiln_module* module;
  kiln_tensor* const* inputs;
  size_t n_inputs;
  const kts_gradcheck_options* options;
  double* weights; /* w, one per output value */
  int64_t n_out;
} gradcheck;

static int failed(const char* what) {
  fprintf(stderr, "gradcheck: %s failed: %s\n", what, kiln_last_error());
  return -1;
}

static int reseed(const gradcheck* g) {
  if (g->options->reseed && kiln_manual_seed(g->rt, g->options->seed) != KILN_OK) return failed("kiln_manual_seed");
  return 0;
}

/* sum(w * output) without recording gradients; NAN on failure (printed). */
static double objective(const gradcheck* g) {
  kiln_tensor* out = NULL;
  double* values = NULL;
  double sum = NAN;
  int64_t i;
  if (reseed(g) != 0 || kiln_no_grad_begin(g->rt) != KILN_OK) return NAN;
  if (kiln_module_forward1(g->module, g->inputs, g->n_inputs, &out) != KILN_OK)
    failed("kiln_module_forward1");
  else if (kts_numel(out) != g->n_out)
    fprintf(stderr, "gradcheck: the output changed size between calls\n");
  else if ((values = kts_read(out)) != NULL)
    for (sum = 0, i = 0; i < g->n_out; ++i) sum += g->weights[i] * values[i];
  kiln_no_grad_end(g->rt);
  free(values);
  kiln_tensor_release(out);
  return sum;
}

/* The tensors to check: floating inputs (made to require grad), then the
 * parameters. Writes their count to *n; NULL on failure. */
static checked* collect(const gradcheck* g, size_t* n) {
  size_t n_params = 0, i, count = 0;
  checked* list;
  if (kiln_module_parameter_count(g->module, &n_params) != KILN_OK) {
    failed("kiln_module_parameter_count");
    return NULL;
  }
  list = calloc(g->n_inputs + n_params + 1, sizeof *list);
  if (!list) return NULL;
  for (i = 0; i < g->n_inputs; ++i) {
    kiln_dtype dtype = KILN_F32;
    if (kiln_tensor_dtype(g->inputs[i], &dtype) != KILN_OK || dtype != KILN_F64) continue;
    if (kiln_tensor_set_requires_grad(g->inputs[i], 1) != KILN_OK) failed("kiln_tensor_set_requires_grad");
    kiln_tensor_retain(g->inputs[i]);
    list[count].tensor = g->inputs[i];
    list[count].is_input = 1;
    snprintf(list[count++].name, sizeof list[0].name, "input %zu", i);
  }
  for (i = 0; i < n_params; ++i) {
    const char* name = NULL;
    if (kiln_module_parameter(g->module, i, &name, &list[count].tensor) != KILN_OK) {
      failed("kiln_module_parameter");
      continue;
    }
    snprintf(list[count++].name, sizeof list[0].name, "parameter %s", name);
  }
  *n = count;
  return list;
}

/* Analytic gradients of every checked tensor (zeros where backward left
 * none), each a malloc'd array; 0 on success. */
static int analytic(const gradcheck* g, checked* list, size_t n, double** grads) {
  kiln_tensor *out = NULL, *seed = NULL;
  int64_t out_dims[KILN_MAX_DIMS];
  int out_rank = 0;
  size_t i;
  int rc = 0;
  for (i = 0; i < n; ++i) kiln_tensor_zero_grad(list[i].tensor);
  if (reseed(g) != 0) return -1;
  if (kiln_module_forward1(g->module, g->inputs, g->n_inputs, &out) != KILN_OK) return failed("kiln_module_forward1");
  if (kiln_tensor_rank(out, &out_rank) != KILN_OK || kiln_tensor_shape(out, out_dims, KILN_MAX_DIMS) != KILN_OK ||
      kts_tensor_f64(g->rt, g->weights, out_dims, out_rank, &seed) != KILN_OK ||
      kiln_backward(g->rt, out, seed, 0) != KILN_OK)
    rc = failed("backward");
  for (i = 0; rc == 0 && i < n; ++i) {
    kiln_tensor* grad = NULL;
    const int64_t count = kts_numel(list[i].tensor);
    if (kiln_tensor_grad(list[i].tensor, &grad) != KILN_OK) {
      rc = failed("kiln_tensor_grad");
    } else if (grad) {
      grads[i] = kts_read(grad);
      if (!grads[i]) rc = -1;
    } else {
      grads[i] = calloc((size_t)(count ? count : 1), sizeof(double));
    }
    kiln_tensor_release(grad);
  }
  kiln_tensor_release(seed);
  kiln_tensor_release(out);
  return rc;
}

/* Central differences of the objective for each element of `t`, compared
 * with `grad`; returns the mismatches or -1. */
static int compare_numeric(const gradcheck* g, const checked* c, const double* grad) {
  const kts_gradcheck_options* o = g->options;
  const int64_t n = kts_numel(c->tensor);
  double* numeric = malloc((size_t)(n ? n : 1) * sizeof *numeric);
  double* data = NULL;
  int64_t j;
  int mismatches;
  if (!numeric) return -1;
  if (kiln_tensor_data(c->tensor, (void**)&data) != KILN_OK) {
    free(numeric);
    return failed("kiln_tensor_data (the checked tensors must be contiguous CPU f64)");
  }
  for (j = 0; j < n; ++j) {
    const double original = data[j];
    double plus, minus;
    data[j] = original + o->eps;
    plus = objective(g);
    data[j] = original - o->eps;
    minus = objective(g);
    data[j] = original;
    numeric[j] = (plus - minus) / (2 * o->eps);
  }
  mismatches = kts_compare(c->name, grad, numeric, n, o->atol, o->rtol);
  free(numeric);
  return mismatches;
}

static int prepare_weights(gradcheck* g) {
  kiln_tensor* out = NULL;
  kts_rng rng;
  int64_t i;
  if (reseed(g) != 0) return -1;
  if (kiln_module_forward1(g->module, g->inputs, g->n_inputs, &out) != KILN_OK) return failed("kiln_module_forward1");
  g->n_out = kts_numel(out);
  kiln_tensor_release(out);
  if (g->n_out < 0) return -1;
  g->weights = malloc((size_t)(g->n_out ? g->n_out : 1) * sizeof *g->weights);
  if (!g->weights) return -1;
  kts_rng_seed(&rng, 12345);
  for (i = 0; i < g->n_out; ++i) g->weights[i] = kts_rng_uniform(&rng, -1.0, 1.0);
  return 0;
}

int kts_gradcheck_module(kiln_runtime* rt, kiln_module* m, kiln_tensor* const* inputs, size_t n_inputs,
                         const kts_gradcheck_options* options) {
  const kts_gradcheck_options defaults = kts_gradcheck_defaults();
  gradcheck g;
  checked* list = NULL;
  double** grads = NULL;
  size_t n = 0, i;
  int result = 0;
  g.rt = rt;
  g.module = m;
  g.inputs = inputs;
  g.n_inputs = n_inputs;
  g.options = options ? options : &defaults;
  g.weights = NULL;
  g.n_out = 0;
  if (prepare_weights(&g) != 0) return -1;
  list = collect(&g, &n);
  grads = list ? calloc(n + 1, sizeof *grads) : NULL;
  if (!grads || analytic(&g, list, n, grads) != 0) result = -1;
  for (i = 0; result >= 0 && i < n; ++i) {
    const int mismatches = compare_numeric(&g, &list[i], grads[i]);
    result = mismatches < 0 ? -1 : result + mismatches;
  }
  for (i = 0; list && i < n; ++i) {
    kiln_tensor_zero_grad(list[i].tensor);
    if (list[i].is_input) kiln_tensor_set_requires_grad(list[i].tensor, 0);
    kiln_tensor_release(list[i].tensor);
    if (grads) free(grads[i]);
  }
  free(grads);
  free(list);
  free(g.weights);
  return result;
}
