// The CPU kernels of lstm_recurrence and its backward op (f32 and f64), the
// whole sequence in one call (the op's schema is in lstm_ops.cpp).
//
// The batch's rows are independent through time, so the rows are split
// over the runtime's threads once and each thread runs every step of its
// rows: per step one product h W_hh^T (kiln's kernel on W_hh packed once,
// lstm_step_product.hpp, or oneDNN's sgemm on one thread) and one fused
// pass over the gates, with no synchronisation between steps.
// The backward runs the steps in reverse the same way, each giving the
// gates' gradient and, by a product with W_hh, that of the previous h; the
// weight's gradient is then one product over all steps on every thread.
#pragma once

#include "kiln/ops/op_def.hpp"

namespace kiln::nn {

void lstm_recurrence_kernel(const KernelCall& c);
void lstm_recurrence_backward_kernel(const KernelCall& c);

}  // namespace kiln::nn
