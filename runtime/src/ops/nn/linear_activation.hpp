// The activation the linear op applies to its output in the same pass as the
// product. gelu_tanh is GELU's tanh approximation: the runtime's gelu with
// approximate = "tanh", PyTorch's GELU(approximate='tanh'), and the only form
// cuBLASLt's GELU epilogue computes. The exact (erf) GELU is not offered, so
// that every device computes what the name says.
#pragma once

#include "kiln/runtime.hpp"

namespace kiln::nn {

enum class LinearActivation { none, relu, gelu_tanh };

// The `activation` attribute of a linear call; throws invalid_argument naming
// the op, the value and the accepted names.
LinearActivation linear_activation(const OpDef& op, const Attrs& attrs);

// The unary op that computes `activation` on its own (relu, or gelu with
// approximate = "tanh"), or its backward op f_backward(grad, input), with
// the attributes to call it with. `activation` is not none.
struct ActivationCall {
  const OpDef& op;
  Attrs attrs;
};
ActivationCall activation_call(Runtime& rt, LinearActivation activation, bool backward);

}  // namespace kiln::nn
