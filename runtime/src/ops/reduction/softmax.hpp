// softmax and log_softmax along one dimension, seen as [outer, n, inner]
// rows of length n and stride inner. f32 runs through oneDNN
// (softmax_dnnl.cpp); the other floating types through plain loops.
#pragma once

#include <cstdint>

#include "kiln/ops/op_def.hpp"
#include "kiln/runtime.hpp"

namespace kiln::reduction {

struct SoftmaxRows {
  int64_t outer = 1, n = 1, inner = 1;
};

// The rows of `shape` along the op's "dim" attribute.
SoftmaxRows softmax_rows(const OpDef& op, const Shape& shape, const Attrs& attrs);

// y = softmax (or log_softmax when Log) of the dense f32 rows of x, through
// oneDNN (its exp runs in the CPU's widest vectors).
template <bool Log> void dnnl_softmax_rows(Runtime& rt, const SoftmaxRows& r, const float* x, float* y);

// oneDNN kernels for f32. Forward: inputs (x) -> y. Backward: inputs
// (grad, y) -> grad of x.
template <bool Log> void softmax_dnnl_kernel(const KernelCall& c);
template <bool Log> void softmax_backward_dnnl_kernel(const KernelCall& c);

}  // namespace kiln::reduction
