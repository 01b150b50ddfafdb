/*
 * references.h: the optimizers of kiln-optim written again in plain C
 * doubles, from PyTorch's formulas, applying them in the same order as the
 * plugin so that only rounding can separate the two. Each has the
 * signature of opt_reference_step (see optim_support.h).
 */
#ifndef KILN_OPTIM_REFERENCES_H
#define KILN_OPTIM_REFERENCES_H

#include <stdint.h>

typedef struct sgd_options {
  double lr, momentum, dampening, weight_decay;
  int nesterov, maximize;
} sgd_options;
/* state: momentum_buffer, n values. */
void opt_sgd_reference(const void* options, int64_t step, double* p, const double* grad, double* buf, int64_t n);

typedef struct adam_options {
  double lr, beta1, beta2, eps, weight_decay;
  int amsgrad, decoupled;
} adam_options;
/* state: exp_avg, exp_avg_sq, max_exp_avg_sq, n values each. */
void opt_adam_reference(const void* options, int64_t step, double* p, const double* grad, double* state, int64_t n);

typedef struct rmsprop_options {
  double lr, alpha, eps, weight_decay, momentum;
  int centered;
} rmsprop_options;
/* state: square_avg, momentum_buffer, grad_avg, n values each. */
void opt_rmsprop_reference(const void* options, int64_t step, double* p, const double* grad, double* state, int64_t n);

typedef struct adagrad_options {
  double lr, lr_decay, weight_decay, initial_accumulator_value, eps;
} adagrad_options;
/* state: the sum of squares, n values, starting at initial_accumulator_value. */
void opt_adagrad_reference(const void* options, int64_t step, double* p, const double* grad, double* sum, int64_t n);

#endif /* KILN_OPTIM_REFERENCES_H */
