// The f32 and bf16 paths of the unary ops: oneDNN eltwise primitives over a
// flat buffer (element-wise work ignores shape), cached by algorithm,
// parameters, dtype and element count.
#pragma once

#include <dnnl.hpp>

#include "kiln/dtype.hpp"
#include "kiln/runtime.hpp"

namespace kiln::elementwise {

// A unary function as oneDNN names it; alpha and beta mean what the
// algorithm says (a slope, an exponent, bounds). The formulas of
// unary_functions.hpp read the same parameters, so every dtype computes the
// same function.
struct EltwiseParams {
  dnnl::algorithm algorithm;
  double alpha = 0.0;
  double beta = 0.0;
};

// dst[i] = f(src[i]) for i < n; both buffers hold `dtype` (f32 or bf16;
// bf16 is computed in f32 and rounded once, as kiln's loops do). Returns
// false, having done nothing, where oneDNN has no vector code for this
// function and dtype on this CPU (its reference code is slower than kiln's
// loops); the caller then runs its own.
bool dnnl_eltwise_forward(Runtime& rt, const EltwiseParams& p, DType dtype, const void* src, void* dst, int64_t n);
// diff_src[i] = diff_dst[i] * f'(src[i]) for i < n; all three hold `dtype`.
// Returns false as the forward does.
bool dnnl_eltwise_backward(Runtime& rt, const EltwiseParams& p, DType dtype, const void* src, const void* diff_dst,
                           void* diff_src, int64_t n);

}  // namespace kiln::elementwise
