// Contiguous copies of a kernel's strided inputs: what the dispatcher gives
// a kernel of an op that does not accept strided inputs, and what a kernel
// of one that does can ask for where it needs dense memory after all.
#pragma once

#include <span>
#include <vector>

#include "kiln/runtime.hpp"

namespace kiln {

// `inputs` with every strided tensor replaced by a contiguous copy; empty
// (and nothing copied) when all are contiguous or undefined.
std::vector<Tensor> dense_copies(Runtime& rt, std::span<const Tensor> inputs);

}  // namespace kiln
