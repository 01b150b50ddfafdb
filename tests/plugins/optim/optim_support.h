/*
 * optim_support.h: helpers for the C99 tests of the kiln-optim plugin:
 * parameters with gradients the test chooses, and a harness that runs an
 * optimizer step by step against a reference written in plain C doubles.
 *
 * Gradients are set through autograd, as in training: the loss
 * sum(param * c) has the gradient c.
 */
#ifndef KILN_OPTIM_SUPPORT_H
#define KILN_OPTIM_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

/* Values per test parameter, and the most state a reference keeps per value. */
#define OPT_N 5
#define OPT_MAX_STATE 4

/* A CPU f64 parameter [n] holding `values`, requiring grad. */
kiln_status opt_param(kiln_runtime* rt, const double* values, int64_t n, kiln_tensor** out);

/* Replaces the gradient of `param` ([n]) with `grad`. */
kiln_status opt_set_grad(kiln_runtime* rt, kiln_tensor* param, const double* grad, int64_t n);

/* The gradient the tests give value i at step `step` (1 for the first):
 * varied in sign and size, so averages rise and fall. */
double opt_grad(int64_t step, int64_t i);

/* Fills grad[0..n) with opt_grad(step, offset + i). */
void opt_grads(int64_t step, int64_t offset, double* grad, int64_t n);

/* The starting values of test parameters. */
extern const double opt_init[OPT_N];

/* One step of a reference optimizer on n values: `state` holds
 * OPT_MAX_STATE * n doubles, zero before the first step, the reference's to use. */
typedef void (*opt_reference_step)(const void* options, int64_t step, double* param, const double* grad, double* state,
                                   int64_t n);

/* Runs `steps` steps of optimizer `type` (configured by `hyper`) on a
 * parameter starting at opt_init with gradients opt_grad, and compares it
 * after every step with `reference` run on the same gradients. Returns the
 * number of failures, each printed with `what`. */
int opt_check_trajectory(kiln_runtime* rt, const char* what, const char* type, const kiln_attr* hyper, size_t n_hyper,
                         opt_reference_step reference, const void* options, int steps);

/* Reads an f64 tensor of n values into `out`; returns 0, or 1 (printed). */
int opt_read(const kiln_tensor* t, double* out, int64_t n);

#endif /* KILN_OPTIM_SUPPORT_H */
