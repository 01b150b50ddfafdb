#include "optim_support.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kiln_test_support.h"

const double opt_init[OPT_N] = {0.5, -1.25, 2.0, 0.0, -0.3};

/* Updates are compared against references that apply the same formulas in
 * the same order, so only rounding separates them. */
static const double kAtol = 1e-12, kRtol = 1e-10;

kiln_status opt_param(kiln_runtime* rt, const double* values, int64_t n, kiln_tensor** out) {
  kiln_tensor* p = NULL;
  kiln_status st = kts_tensor_f64(rt, values, &n, 1, &p);
  if (st == KILN_OK) st = kiln_tensor_set_requires_grad(p, 1);
  if (st != KILN_OK) {
    kiln_tensor_release(p);
    return st;
  }
  *out = p;
  return KILN_OK;
}

kiln_status opt_set_grad(kiln_runtime* rt, kiln_tensor* param, const double* grad, int64_t n) {
  const kiln_op *mul = NULL, *sum = NULL;
  kiln_tensor *c = NULL, *product = NULL, *loss = NULL;
  kiln_status st = kiln_tensor_zero_grad(param);
  if (st == KILN_OK) st = kiln_op_find(rt, "mul", &mul);
  if (st == KILN_OK) st = kiln_op_find(rt, "sum", &sum);
  if (st == KILN_OK) st = kts_tensor_f64(rt, grad, &n, 1, &c);
  if (st == KILN_OK) {
    kiln_tensor* args[2];
    args[0] = param;
    args[1] = c;
    st = kiln_op_call1(rt, mul, args, 2, NULL, 0, &product);
  }
  if (st == KILN_OK) st = kiln_op_call1(rt, sum, &product, 1, NULL, 0, &loss);
  if (st == KILN_OK) st = kiln_backward(rt, loss, NULL, 0);
  kiln_tensor_release(loss);
  kiln_tensor_release(product);
  kiln_tensor_release(c);
  return st;
}

double opt_grad(int64_t step, int64_t i) { return sin(0.7 * (double)step + 1.3 * (double)i) + 0.1 * ((double)i - 1.5); }

void opt_grads(int64_t step, int64_t offset, double* grad, int64_t n) {
  int64_t i;
  for (i = 0; i < n; ++i) grad[i] = opt_grad(step, offset + i);
}

int opt_read(const kiln_tensor* t, double* out, int64_t n) {
  if (kiln_tensor_read(t, out, (size_t)n * sizeof(double)) == KILN_OK) return 0;
  fprintf(stderr, "reading a tensor failed: %s\n", kiln_last_error());
  return 1;
}

int opt_check_trajectory(kiln_runtime* rt, const char* what, const char* type, const kiln_attr* hyper, size_t n_hyper,
                         opt_reference_step reference, const void* options, int steps) {
  double want[OPT_N], grad[OPT_N], state[OPT_MAX_STATE * OPT_N];
  kiln_tensor* p = NULL;
  kiln_optimizer* opt = NULL;
  int failures = 0;
  int64_t step;
  char label[128];
  memcpy(want, opt_init, sizeof want);
  memset(state, 0, sizeof state);
  if (opt_param(rt, opt_init, OPT_N, &p) != KILN_OK ||
      kiln_optimizer_create(rt, type, &p, 1, hyper, n_hyper, &opt) != KILN_OK) {
    fprintf(stderr, "%s: setting up failed: %s\n", what, kiln_last_error());
    kiln_tensor_release(p);
    return 1;
  }
  for (step = 1; step <= steps; ++step) {
    opt_grads(step, 0, grad, OPT_N);
    if (opt_set_grad(rt, p, grad, OPT_N) != KILN_OK || kiln_optimizer_step(opt) != KILN_OK) {
      fprintf(stderr, "%s: step %d failed: %s\n", what, (int)step, kiln_last_error());
      ++failures;
      break;
    }
    reference(options, step, want, grad, state, OPT_N);
    snprintf(label, sizeof label, "%s, step %d", what, (int)step);
    failures += kts_compare_tensor(label, p, want, OPT_N, kAtol, kRtol);
  }
  kiln_optimizer_release(opt);
  kiln_tensor_release(p);
  return failures;
}
