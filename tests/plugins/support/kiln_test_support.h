/*
 * kiln_test_support.h: helpers for C99 tests of plugins, written against the
 * C API (kiln.h) alone: a runtime that finds the core plugins, reproducible
 * random f64 tensors, reading values back as doubles, comparing them with a
 * reference, and a gradient checker for modules.
 *
 *   kiln_runtime* rt = NULL;
 *   kiln_module* m = NULL;
 *   kts_rng rng;
 *   kiln_tensor* x = NULL;
 *   const int64_t shape[2] = {2, 3};
 *   kiln_attr cfg[2] = {kiln_attr_int("in_features", 3), kiln_attr_int("out_features", 4)};
 *   kts_runtime_create(1, &rt);
 *   kiln_module_create(rt, "Linear", cfg, 2, &m);
 *   kiln_module_cast(m, KILN_F64);                     (gradients are checked in f64)
 *   kts_rng_seed(&rng, 7);
 *   kts_tensor_uniform(rt, &rng, shape, 2, -1.0, 1.0, &x);
 *   if (kts_gradcheck_module(rt, m, &x, 1, NULL) != 0) ...failed...
 *
 * Functions that return kiln_status leave kiln_last_error() as the failing
 * call left it; the others print what went wrong to stderr. Handles they
 * give back carry one reference for the caller, as in kiln.h.
 */
#ifndef KILN_TEST_SUPPORT_H
#define KILN_TEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A runtime with default options (so the core plugins beside libkiln.so
 * are loaded) and its random stream seeded with `seed`. */
kiln_status kts_runtime_create(uint64_t seed, kiln_runtime** out);

/* A small generator of the tests' own (xorshift64*), independent of the
 * runtime's stream, so reference data does not move when a layer draws
 * more or fewer random numbers. */
typedef struct kts_rng {
  uint64_t state;
} kts_rng;

void kts_rng_seed(kts_rng* rng, uint64_t seed);
/* Uniform in [low, high). */
double kts_rng_uniform(kts_rng* rng, double low, double high);

/* A CPU f64 tensor holding `values` (row-major, the product of `shape`). */
kiln_status kts_tensor_f64(kiln_runtime* rt, const double* values, const int64_t* shape, int rank, kiln_tensor** out);

/* A CPU f64 tensor of U(low, high) values from `rng`. */
kiln_status kts_tensor_uniform(kiln_runtime* rt, kts_rng* rng, const int64_t* shape, int rank, double low,
                               double high, kiln_tensor** out);

/* The product of the tensor's dims, or -1 (printed) on failure. */
int64_t kts_numel(const kiln_tensor* t);

/* The values of an f32 or f64 tensor (any device, any layout) as doubles in
 * a malloc'd array of kts_numel(t) values that the caller frees; NULL on
 * failure (printed). */
double* kts_read(const kiln_tensor* t);

/* The parameter or buffer of `m` named `name` ("weight", "self_attn.out_proj.bias");
 * NULL when there is none (printed). The caller releases it. */
kiln_tensor* kts_parameter(const kiln_module* m, const char* name);
kiln_tensor* kts_buffer(const kiln_module* m, const char* name);

/* Counts the values where |got - want| > atol + rtol * |want|, printing the
 * first few with `what` (a name for the comparison). */
int kts_compare(const char* what, const double* got, const double* want, int64_t n, double atol, double rtol);

/* kts_compare of a tensor's values against `want` (n values; a tensor of
 * another size counts as one mismatch). */
int kts_compare_tensor(const char* what, const kiln_tensor* got, const double* want, int64_t n, double atol,
                       double rtol);

/* ---- gradient check ------------------------------------------------------- */

typedef struct kts_gradcheck_options {
  double eps;  /* central difference step */
  double atol; /* |analytic - numeric| <= atol + rtol * |numeric| */
  double rtol;
  /* Nonzero: kiln_manual_seed(rt, seed) before every forward, so a random
   * layer (Dropout) draws the same mask each time. */
  int reseed;
  uint64_t seed;
} kts_gradcheck_options;

/* eps 1e-6, atol 1e-5, rtol 1e-3, no reseeding. */
kts_gradcheck_options kts_gradcheck_defaults(void);

/* Checks the gradients of module `m` (cast to f64 by the caller, on the
 * CPU) at `inputs` (CPU f64 tensors; integer inputs such as indices are
 * left alone): for the scalar sum(w * output 0), with fixed random weights
 * w, the gradient of every element of every floating input and every
 * parameter from backward against central finite differences. The inputs
 * are left as they came (values and requires_grad off); parameters keep
 * their values. Returns the number of mismatches (each printed, the first
 * few), or -1 when a call failed (printed). `options` NULL: the defaults. */
int kts_gradcheck_module(kiln_runtime* rt, kiln_module* m, kiln_tensor* const* inputs, size_t n_inputs,
                         const kts_gradcheck_options* options);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_TEST_SUPPORT_H */
