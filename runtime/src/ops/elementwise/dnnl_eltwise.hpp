// The f32 path of the unary ops: oneDNN eltwise primitives over a flat
// buffer (element-wise work ignores shape), cached by algorithm, parameters
// and element count.
#pragma once

#include <dnnl.hpp>

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

// dst[i] = f(src[i]) for i < n.
void dnnl_eltwise_forward(Runtime& rt, const EltwiseParams& p, const float* src, float* dst, int64_t n);
// diff_src[i] = diff_dst[i] * f'(src[i]) for i < n.
void dnnl_eltwise_backward(Runtime& rt, const EltwiseParams& p, const float* src, const float* diff_dst,
                           float* diff_src, int64_t n);

}  // namespace kiln::elementwise
