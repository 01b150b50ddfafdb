/* What every layer test uses: the check harness, the plugin test support,
 * the references, and a few shorthands over them. */
#ifndef KILN_LAYER_TEST_H
#define KILN_LAYER_TEST_H

#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "kiln_test_support.h"
#include "reference.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Tolerances of forward comparisons in f64 (the ops compute in double). */
#define FORWARD_ATOL 1e-10
#define FORWARD_RTOL 1e-9

/* The one-thread runtime a layer test runs on; exits with 1, saying why,
 * when it cannot be made. */
static inline kiln_runtime* layer_test_runtime(void) {
  kiln_runtime* rt = NULL;
  if (kts_runtime_create(1, &rt) != KILN_OK) {
    fprintf(stderr, "runtime: %s\n", kiln_last_error());
    exit(1);
  }
  return rt;
}

/* A module of `type`, cast to f64 when `f64`; NULL after a failed check. */
static inline kiln_module* make_module(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n,
                                       int f64) {
  kiln_module* m = NULL;
  CHECK_OK(kiln_module_create(rt, type, config, n, &m));
  if (m && f64) CHECK_OK(kiln_module_cast(m, KILN_F64));
  return m;
}

/* The values of parameter `name` (malloc'd); NULL after a failed check. */
static inline double* parameter_values(const kiln_module* m, const char* name) {
  kiln_tensor* t = kts_parameter(m, name);
  double* values = t ? kts_read(t) : NULL;
  CHECK(values != NULL);
  kiln_tensor_release(t);
  return values;
}

/* The values of output 0 of m(inputs) (malloc'd); NULL after a failed check. */
static inline double* forward_values(kiln_module* m, kiln_tensor* const* inputs, size_t n) {
  kiln_tensor* out = NULL;
  double* values = NULL;
  CHECK_OK(kiln_module_forward1(m, inputs, n, &out));
  if (out) values = kts_read(out);
  CHECK(values != NULL);
  kiln_tensor_release(out);
  return values;
}

/* A layer's forward computed from its definition: y from the input x and
 * the layer's weight w and bias b; `context` holds the geometry. */
typedef void (*forward_reference)(const void* context, const double* x, const double* w, const double* b, double* y);

/* conv2d_reference as a forward_reference (context: its geometry). */
static inline void conv2d_forward_reference(const void* context, const double* x, const double* w, const double* b,
                                            double* y) {
  conv2d_reference((const conv_reference_geometry*)context, x, w, b, y);
}

/* m(x), n_out values, against `reference` over m's "weight" and "bias"; the
 * failure names `what`. */
static inline void check_weighted_forward(const char* what, kiln_module* m, kiln_tensor* x, int64_t n_out,
                                          forward_reference reference, const void* context) {
  double* xs = kts_read(x);
  double* w = parameter_values(m, "weight");
  double* b = parameter_values(m, "bias");
  double* got = forward_values(m, &x, 1);
  double* want = malloc((size_t)n_out * sizeof *want);
  if (xs && w && b && got && want) {
    reference(context, xs, w, b, want);
    CHECK(kts_compare(what, got, want, n_out, FORWARD_ATOL, FORWARD_RTOL) == 0);
  }
  free(xs);
  free(w);
  free(b);
  free(got);
  free(want);
}

/* Gradients of m at `inputs` match finite differences (options NULL: the
 * defaults). */
#define CHECK_GRADIENTS(rt, m, inputs, n, options) CHECK(kts_gradcheck_module((rt), (m), (inputs), (n), (options)) == 0)

/* Sets parameter `name` of m to U(-1, 1) values from rng (so that a test
 * sees weights and biases away from their initial ones and zeros). */
static inline void randomize_parameter(kiln_runtime* rt, kiln_module* m, const char* name, kts_rng* rng) {
  kiln_tensor* p = kts_parameter(m, name);
  kiln_tensor* values = NULL;
  int64_t dims[KILN_MAX_DIMS];
  int rank = 0;
  CHECK(p != NULL);
  if (!p) return;
  CHECK_OK(kiln_tensor_rank(p, &rank));
  CHECK_OK(kiln_tensor_shape(p, dims, KILN_MAX_DIMS));
  CHECK_OK(kts_tensor_uniform(rt, rng, dims, rank, -1.0, 1.0, &values));
  if (values) CHECK_OK(kiln_tensor_assign(p, values));
  kiln_tensor_release(values);
  kiln_tensor_release(p);
}

/* The shape of a tensor equals `dims`. */
static inline int has_shape(const kiln_tensor* t, const int64_t* dims, int rank) {
  int64_t got[KILN_MAX_DIMS];
  int got_rank = -1, d;
  if (kiln_tensor_rank(t, &got_rank) != KILN_OK || got_rank != rank) return 0;
  if (kiln_tensor_shape(t, got, KILN_MAX_DIMS) != KILN_OK) return 0;
  for (d = 0; d < rank; ++d)
    if (got[d] != dims[d]) return 0;
  return 1;
}

#endif /* KILN_LAYER_TEST_H */
