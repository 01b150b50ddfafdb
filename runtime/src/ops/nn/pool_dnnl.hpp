// The f32 (and bf16) forward of 2-d pooling on oneDNN (inference primitives:
// backward ops recompute what they need in plain C++, so no workspace is
// kept).
#pragma once

#include "kiln/runtime.hpp"
#include "pool_geometry.hpp"

namespace kiln::nn {

void dnnl_max_pool2d(Runtime& rt, const Pool2dGeometry& g, const Tensor& input, Tensor& output);
// Returns false, having done nothing, where oneDNN's divisor would differ from
// PyTorch's (count_include_pad with windows past the padding); the caller
// then runs the plain C++ kernel.
bool dnnl_avg_pool2d(Runtime& rt, const Pool2dGeometry& g, bool count_include_pad, const Tensor& input,
                     Tensor& output);

}  // namespace kiln::nn
