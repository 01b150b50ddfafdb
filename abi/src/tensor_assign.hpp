// Values copied into an existing tensor in place: what kiln_tensor_assign
// does, and what loading a checkpoint does to every parameter, buffer and
// optimizer state it restores.
#pragma once

#include "kiln/runtime.hpp"
#include "kiln/tensor.hpp"

namespace kiln::abi {

// Copies `src` into `target` (same shape; `target` contiguous), converted
// to `target`'s dtype and moved to its device on the way, outside of any
// gradient recording. Throws kiln::Error naming what does not fit.
void assign_values(Runtime& rt, const Tensor& target, const Tensor& src);

}  // namespace kiln::abi
