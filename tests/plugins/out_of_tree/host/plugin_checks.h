/* The checks of the kiln-example-swish plugin, run by main.c against the
 * installed libkiln.so, and the helpers they share. check.h counts failures
 * per file, so each check returns the count of its file and the helpers are
 * inline: their failures count in the file that calls them. */
#ifndef PLUGIN_CHECKS_H
#define PLUGIN_CHECKS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "kiln/kiln.h"

int check_swish_op(kiln_runtime* rt);
int check_swish_layer(kiln_runtime* rt);
int check_lion(kiln_runtime* rt);
int check_training(kiln_runtime* rt);

static inline kiln_tensor* make_tensor(kiln_runtime* rt, const void* data, size_t element_size, const int64_t* shape,
                                       int rank, kiln_dtype dtype) {
  kiln_tensor* t = NULL;
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= shape[d];
  CHECK_OK(kiln_tensor_from_data(rt, data, (size_t)n * element_size, shape, rank, dtype, &t));
  return t;
}

static inline kiln_tensor* make_f64(kiln_runtime* rt, const double* data, const int64_t* shape, int rank) {
  return make_tensor(rt, data, sizeof(double), shape, rank, KILN_F64);
}

static inline kiln_tensor* make_f32(kiln_runtime* rt, const float* data, const int64_t* shape, int rank) {
  return make_tensor(rt, data, sizeof(float), shape, rank, KILN_F32);
}

/* The op `name` called on `inputs`; NULL (and a failed check) when it fails. */
static inline kiln_tensor* call_op(kiln_runtime* rt, const char* name, kiln_tensor* const* inputs, size_t n_inputs,
                                   const kiln_attr* attrs, size_t n_attrs) {
  const kiln_op* op = NULL;
  kiln_tensor* out = NULL;
  CHECK_OK(kiln_op_find(rt, name, &op));
  if (op) CHECK_OK(kiln_op_call1(rt, op, inputs, n_inputs, attrs, n_attrs, &out));
  return out;
}

/* The one element of an f32 or f64 tensor; NAN when there is none. */
static inline double scalar_of(const kiln_tensor* t) {
  kiln_dtype dtype = KILN_F32;
  double d = NAN;
  float f = NAN;
  if (!t) return NAN;
  CHECK_OK(kiln_tensor_dtype(t, &dtype));
  if (dtype == KILN_F64) {
    CHECK_OK(kiln_tensor_read(t, &d, sizeof d));
    return d;
  }
  CHECK_OK(kiln_tensor_read(t, &f, sizeof f));
  return f;
}

/* |got - want| <= atol + rtol * |want| (false for NAN). */
static inline int close_to(double got, double want, double atol, double rtol) {
  return fabs(got - want) <= atol + rtol * fabs(want);
}

/* Checks the `n` f64 elements of `t` against `want`, printing the first
 * mismatches under `what`. */
static inline void check_elements(const kiln_tensor* t, const double* want, size_t n, double atol, double rtol,
                                  const char* what) {
  size_t mismatches = 0;
  double* got = calloc(n, sizeof *got);
  CHECK(got != NULL && t != NULL);
  if (!got || !t) {
    free(got);
    return;
  }
  CHECK_OK(kiln_tensor_read(t, got, n * sizeof *got));
  for (size_t i = 0; i < n; ++i) {
    if (close_to(got[i], want[i], atol, rtol)) continue;
    if (mismatches++ < 5) fprintf(stderr, "%s: element %zu is %.12g, expected %.12g\n", what, i, got[i], want[i]);
  }
  CHECK(mismatches == 0);
  free(got);
}

#endif /* PLUGIN_CHECKS_H */
