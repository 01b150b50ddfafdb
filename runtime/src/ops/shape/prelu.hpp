// prelu(input, weight) = input where it is positive, weight[c] * input
// elsewhere, with c the channel (dim 1) of the element, as
// torch.nn.functional.prelu: the weight holds one slope, or one per
// channel. The geometry and the formulas, shared by the CPU and CUDA kernels.
#pragma once

#include <cstdint>

#include "kiln/ops/op_def.hpp"
#include "kiln/util/host_device.hpp"

namespace kiln::shape {

struct PreluGeometry {
  int64_t channels = 1;  // slopes in the weight
  int64_t inner = 1;     // elements per channel row (the dims after dim 1)

  KILN_HOST_DEVICE int64_t channel(int64_t e) const { return channels == 1 ? 0 : (e / inner) % channels; }
};

// The geometry of prelu on `input` with `weight`; checks that they fit.
PreluGeometry prelu_geometry(const OpDef& op, const Shape& input, const Shape& weight);

template <class A>
KILN_HOST_DEVICE A prelu_value(A x, A slope) {
  return x > A(0) ? x : slope * x;
}

// d out / d input (at 0 the slope's side, as PyTorch).
template <class A>
KILN_HOST_DEVICE A prelu_input_slope(A x, A slope) {
  return x > A(0) ? A(1) : slope;
}

// d out / d slope.
template <class A>
KILN_HOST_DEVICE A prelu_weight_slope(A x) {
  return x > A(0) ? A(0) : x;
}

}  // namespace kiln::shape
