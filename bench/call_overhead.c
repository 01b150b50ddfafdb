/* The fixed cost of one op call through kiln's C API: `add` of two
 * 1-element f32 tensors with grad recording off, in ns of the process's CPU
 * time per call (load on other cores moves it little), the median of five
 * runs after warm-up calls. bench/suite/compare.py prints it beside the same
 * call from Lua and Python.
 *
 *   build/bench/kiln_call_overhead [calls per run]        (default 200000) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kiln/kiln.h"

enum { RUNS = 5 };

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char* what) {
  fprintf(stderr, "kiln_call_overhead: %s: %s\n", what, kiln_last_error());
  return 1;
}

/* Calls add(a, b) `calls` times; the seconds they took, or a negative number on failure. */
static double time_calls(kiln_runtime* rt, const kiln_op* add, kiln_tensor* const* inputs, long calls) {
  const double start = cpu_seconds();
  for (long i = 0; i < calls; ++i) {
    kiln_tensor* sum = NULL;
    if (kiln_op_call1(rt, add, inputs, 2, NULL, 0, &sum) != KILN_OK) return -1.0;
    kiln_tensor_release(sum);
  }
  return cpu_seconds() - start;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  const long calls = argc > 1 ? atol(argv[1]) : 200000;
  if (calls <= 0) {
    fprintf(stderr, "usage: kiln_call_overhead [calls per run > 0]\n");
    return 2;
  }
  kiln_runtime* rt = NULL;
  if (kiln_runtime_create(NULL, &rt) != KILN_OK) return fail("runtime");
  const kiln_op* add = NULL;
  const int64_t shape[1] = {1};
  const float one = 1.0f;
  kiln_tensor* inputs[2] = {NULL, NULL};
  int status = 0;
  if (kiln_op_find(rt, "add", &add) != KILN_OK || kiln_no_grad_begin(rt) != KILN_OK ||
      kiln_tensor_from_data(rt, &one, sizeof one, shape, 1, KILN_F32, &inputs[0]) != KILN_OK ||
      kiln_tensor_from_data(rt, &one, sizeof one, shape, 1, KILN_F32, &inputs[1]) != KILN_OK) {
    status = fail("setup");
  } else {
    double ns[RUNS];
    if (time_calls(rt, add, inputs, calls / 10 + 1) < 0) status = fail("add");
    for (int r = 0; r < RUNS && status == 0; ++r) {
      const double seconds = time_calls(rt, add, inputs, calls);
      if (seconds < 0) status = fail("add");
      ns[r] = 1e9 * seconds / (double)calls;
    }
    if (status == 0) {
      qsort(ns, RUNS, sizeof ns[0], compare_doubles);
      printf("C: %.1f ns per call (median of %d runs of %ld calls)\n", ns[RUNS / 2], RUNS, calls);
    }
  }
  kiln_tensor_release(inputs[0]);
  kiln_tensor_release(inputs[1]);
  kiln_runtime_release(rt);
  return status;
}
