#include "references.h"

#include <math.h>

/* state: momentum_buffer, n values. */
void opt_sgd_reference(const void* options, int64_t step, double* p, const double* grad, double* buf, int64_t n) {
  const sgd_options* o = (const sgd_options*)options;
  int64_t i;
  for (i = 0; i < n; ++i) {
    double d = o->maximize ? -grad[i] : grad[i];
    if (o->weight_decay != 0) d = d + p[i] * o->weight_decay;
    if (o->momentum != 0) {
      buf[i] = step == 1 ? d : buf[i] * o->momentum + d * (1 - o->dampening);
      d = o->nesterov ? d + buf[i] * o->momentum : buf[i];
    }
    p[i] = p[i] + d * -o->lr;
  }
}

/* state: exp_avg, exp_avg_sq, max_exp_avg_sq, n values each. */
void opt_adam_reference(const void* options, int64_t step, double* p, const double* grad, double* state, int64_t n) {
  const adam_options* o = (const adam_options*)options;
  double *m = state, *v = state + n, *v_max = state + 2 * n;
  const double bias_correction1 = 1 - pow(o->beta1, (double)step);
  const double bias_correction2 = 1 - pow(o->beta2, (double)step);
  const double step_size = o->lr / bias_correction1;
  int64_t i;
  for (i = 0; i < n; ++i) {
    double g = grad[i], second, denom;
    if (o->decoupled)
      p[i] = p[i] * (1 - o->lr * o->weight_decay);
    else if (o->weight_decay != 0)
      g = g + p[i] * o->weight_decay;
    m[i] = m[i] * o->beta1 + g * (1 - o->beta1);
    v[i] = v[i] * o->beta2 + (g * g) * (1 - o->beta2);
    second = v[i];
    if (o->amsgrad) {
      v_max[i] = v_max[i] > v[i] ? v_max[i] : v[i];
      second = v_max[i];
    }
    denom = sqrt(second) * (1 / sqrt(bias_correction2)) + o->eps;
    p[i] = p[i] + (m[i] / denom) * -step_size;
  }
}

/* state: square_avg, momentum_buffer, grad_avg, n values each. */
void opt_rmsprop_reference(const void* options, int64_t step, double* p, const double* grad, double* state, int64_t n) {
  const rmsprop_options* o = (const rmsprop_options*)options;
  double *square_avg = state, *buf = state + n, *grad_avg = state + 2 * n;
  int64_t i;
  (void)step;
  for (i = 0; i < n; ++i) {
    double g = grad[i], avg;
    if (o->weight_decay != 0) g = g + p[i] * o->weight_decay;
    square_avg[i] = square_avg[i] * o->alpha + (g * g) * (1 - o->alpha);
    if (o->centered) {
      grad_avg[i] = grad_avg[i] * o->alpha + g * (1 - o->alpha);
      avg = sqrt(square_avg[i] - grad_avg[i] * grad_avg[i]);
    } else {
      avg = sqrt(square_avg[i]);
    }
    avg = avg + o->eps;
    if (o->momentum > 0) {
      buf[i] = buf[i] * o->momentum + g / avg;
      p[i] = p[i] + buf[i] * -o->lr;
    } else {
      p[i] = p[i] + (g / avg) * -o->lr;
    }
  }
}

/* state: the sum of squares, n values, starting at initial_accumulator_value. */
void opt_adagrad_reference(const void* options, int64_t step, double* p, const double* grad, double* sum, int64_t n) {
  const adagrad_options* o = (const adagrad_options*)options;
  const double clr = o->lr / (1 + (double)(step - 1) * o->lr_decay);
  int64_t i;
  for (i = 0; i < n; ++i) {
    double g = grad[i];
    if (step == 1) sum[i] = o->initial_accumulator_value;
    if (o->weight_decay != 0) g = g + p[i] * o->weight_decay;
    sum[i] = sum[i] + g * g;
    p[i] = p[i] + (g / (sqrt(sum[i]) + o->eps)) * -clr;
  }
}
