// The kernels of scaled_dot_product_attention (outputs the attention and
// the dropout mask) and of its backward op (inputs grad_output, query, key,
// value, output, attn_mask, dropout_mask; outputs the gradients of query,
// key and value, then with attn_mask_grad that of attn_mask):
// - fused on the CPU for f32 and f64 (attention_fused.cpp): one pass over
//   the keys per query row with a running softmax, so no [L, S] matrix of
//   scores or weights is ever stored; with dropout, whose mask is such a
//   matrix, and for the backward with attn_mask_grad, whose result is one
//   summed, they run the composed kernels;
// - in f32 without a mask (causal or not) and without dropout, a head at a
//   time in vectors (attention_rows_f32.cpp), which the fused kernels try
//   first: false when the call is not of that kind;
// - composed of matmul, softmax and element-wise ops for the other dtypes
//   and devices (attention_composed.cpp), the [L, S] weights materialised.
#pragma once

#include "kiln/ops/op_def.hpp"

namespace kiln::nn {

void attention_fused_kernel(const KernelCall& c);
void attention_backward_fused_kernel(const KernelCall& c);

// The op takes strided inputs (for the f32 path): the other kernels run
// through this, which gives them contiguous copies of those that are not.
void with_dense_inputs(const KernelCall& c, KernelFn kernel);

bool attention_rows_f32(const KernelCall& c);
bool attention_backward_rows_f32(const KernelCall& c);
void attention_composed_kernel(const KernelCall& c);
void attention_backward_composed_kernel(const KernelCall& c);

}  // namespace kiln::nn
