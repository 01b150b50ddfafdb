// The batched matrix product behind matmul and linear:
//   out[batch..., M, N] = a[batch..., M, K] @ b[batch..., K, N] (+ bias[N])
// a and b may have fewer batch dimensions than out, or size 1 where out has
// more (broadcast), and may be strided views: f32 hands the strides to oneDNN,
// f64 runs plain loops over dense copies.
#pragma once

#include "kiln/runtime.hpp"

namespace kiln::nn {

// out must be contiguous and shaped [batch..., M, N]; bias may be undefined.
void batched_matmul(Runtime& rt, const Tensor& a, const Tensor& b, const Tensor& bias, Tensor& out);

}  // namespace kiln::nn
