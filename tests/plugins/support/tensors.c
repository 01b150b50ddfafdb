/* Runtimes, random tensors, reading values and comparing them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln_test_support.h"

kiln_status kts_runtime_create(uint64_t seed, kiln_runtime** out) {
  kiln_runtime_options options;
  memset(&options, 0, sizeof options);
  options.size = sizeof options;
  options.seed = seed;
  return kiln_runtime_create(&options, out);
}

void kts_rng_seed(kts_rng* rng, uint64_t seed) {
  /* xorshift64* must not start at zero. */
  rng->state = seed * 0x9E3779B97F4A7C15ull + 1;
}

double kts_rng_uniform(kts_rng* rng, double low, double high) {
  uint64_t x = rng->state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng->state = x;
  /* The top 53 bits of the scrambled state as a fraction in [0, 1). */
  return low + (high - low) * (double)((x * 0x2545F4914F6CDD1Dull) >> 11) * (1.0 / 9007199254740992.0);
}

static int64_t shape_numel(const int64_t* shape, int rank) {
  int64_t n = 1;
  int d;
  for (d = 0; d < rank; ++d) n *= shape[d];
  return n;
}

kiln_status kts_tensor_f64(kiln_runtime* rt, const double* values, const int64_t* shape, int rank, kiln_tensor** out) {
  const size_t bytes = (size_t)shape_numel(shape, rank) * sizeof(double);
  return kiln_tensor_from_data(rt, values, bytes, shape, rank, KILN_F64, out);
}

kiln_status kts_tensor_uniform(kiln_runtime* rt, kts_rng* rng, const int64_t* shape, int rank, double low,
                               double high, kiln_tensor** out) {
  const int64_t n = shape_numel(shape, rank);
  double* values = malloc((size_t)(n ? n : 1) * sizeof *values);
  kiln_status st;
  int64_t i;
  if (!values) return KILN_ERR_OUT_OF_MEMORY;
  for (i = 0; i < n; ++i) values[i] = kts_rng_uniform(rng, low, high);
  st = kts_tensor_f64(rt, values, shape, rank, out);
  free(values);
  return st;
}

int64_t kts_numel(const kiln_tensor* t) {
  int64_t n = -1;
  if (kiln_tensor_numel(t, &n) != KILN_OK) fprintf(stderr, "kts_numel: %s\n", kiln_last_error());
  return n;
}

double* kts_read(const kiln_tensor* t) {
  const int64_t n = kts_numel(t);
  kiln_dtype dtype = KILN_F32;
  double* values;
  int64_t i;
  if (n < 0 || kiln_tensor_dtype(t, &dtype) != KILN_OK) return NULL;
  if (dtype != KILN_F32 && dtype != KILN_F64) {
    fprintf(stderr, "kts_read: expected an f32 or f64 tensor, got dtype %d\n", (int)dtype);
    return NULL;
  }
  values = malloc((size_t)(n ? n : 1) * sizeof *values);
  if (!values) return NULL;
  if (dtype == KILN_F64) {
    if (kiln_tensor_read(t, values, (size_t)n * sizeof *values) == KILN_OK) return values;
  } else {
    /* f32 values fill the front half of the buffer and widen from the back,
     * so no value is overwritten before it is read. */
    float* narrow = (float*)values;
    if (kiln_tensor_read(t, narrow, (size_t)n * sizeof *narrow) == KILN_OK) {
      for (i = n - 1; i >= 0; --i) values[i] = (double)narrow[i];
      return values;
    }
  }
  fprintf(stderr, "kts_read: %s\n", kiln_last_error());
  free(values);
  return NULL;
}

typedef kiln_status (*count_fn)(const kiln_module*, size_t*);
typedef kiln_status (*entry_fn)(const kiln_module*, size_t, const char**, kiln_tensor**);

static kiln_tensor* find_named(const kiln_module* m, const char* name, count_fn count, entry_fn entry,
                               const char* kind) {
  size_t n = 0, i;
  if (count(m, &n) != KILN_OK) {
    fprintf(stderr, "kts: counting %ss failed: %s\n", kind, kiln_last_error());
    return NULL;
  }
  for (i = 0; i < n; ++i) {
    const char* entry_name = NULL;
    kiln_tensor* t = NULL;
    if (entry(m, i, &entry_name, &t) != KILN_OK) {
      fprintf(stderr, "kts: %s %zu: %s\n", kind, i, kiln_last_error());
      return NULL;
    }
    if (strcmp(entry_name, name) == 0) return t;
    kiln_tensor_release(t);
  }
  fprintf(stderr, "kts: the module has no %s named \"%s\"\n", kind, name);
  return NULL;
}

kiln_tensor* kts_parameter(const kiln_module* m, const char* name) {
  return find_named(m, name, kiln_module_parameter_count, kiln_module_parameter, "parameter");
}

kiln_tensor* kts_buffer(const kiln_module* m, const char* name) {
  return find_named(m, name, kiln_module_buffer_count, kiln_module_buffer, "buffer");
}

int kts_compare(const char* what, const double* got, const double* want, int64_t n, double atol, double rtol) {
  enum { kShown = 8 };
  int mismatches = 0;
  int64_t i;
  for (i = 0; i < n; ++i) {
    const double limit = atol + rtol * fabs(want[i]);
    if (fabs(got[i] - want[i]) <= limit) continue; /* also false for NaN */
    if (mismatches++ < kShown)
      fprintf(stderr, "%s[%lld]: got %.10g, expected %.10g (tolerance %.3g)\n", what, (long long)i, got[i], want[i],
              limit);
  }
  if (mismatches > kShown) fprintf(stderr, "%s: %d mismatches in all\n", what, mismatches);
  return mismatches;
}

int kts_compare_tensor(const char* what, const kiln_tensor* got, const double* want, int64_t n, double atol,
                       double rtol) {
  const int64_t count = kts_numel(got);
  double* values;
  int mismatches;
  if (count != n) {
    fprintf(stderr, "%s: %lld values, expected %lld\n", what, (long long)count, (long long)n);
    return 1;
  }
  values = kts_read(got);
  if (!values) return 1;
  mismatches = kts_compare(what, values, want, n, atol, rtol);
  free(values);
  return mismatches;
}
