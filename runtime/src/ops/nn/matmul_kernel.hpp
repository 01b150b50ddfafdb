// The batched matrix product behind matmul and linear:
//   out[batch..., M, N] = act(a[batch..., M, K] @ b[batch..., K, N] (+ bias[N]))
// a and b may have fewer batch dimensions than out, or size 1 where out has
// more (broadcast), and may be strided views: f32 and bf16 hand the
// strides to oneDNN (which accumulates in f32 and rounds once, into out),
// f64 runs plain loops over dense copies. An f32 a^T b over a long inner
// dimension (a weight gradient's) runs kiln's own kernel on AVX2
// (matmul_transposed_f32.hpp). The activation rides in the same
// pass: a oneDNN post-op on the f32 accumulator, applied to each row as the
// loops finish it for f64. A 16-bit dtype this CPU's oneDNN cannot run is a
// Status::unsupported error naming `op` (dnnl_precision.hpp).
#pragma once

#include "kiln/runtime.hpp"
#include "linear_activation.hpp"

namespace kiln::nn {

// out must be contiguous and shaped [batch..., M, N]; bias may be undefined.
void batched_matmul(Runtime& rt, const OpDef& op, const Tensor& a, const Tensor& b, const Tensor& bias, Tensor& out,
                    LinearActivation activation = LinearActivation::none);

}  // namespace kiln::nn
