// The orders norm supports, read from its "p" attribute; shared by the CPU
// and CUDA kernels of norm and norm_backward.
#pragma once

#include "kiln/ops/op_def.hpp"

namespace kiln::reduction {

enum class NormOrder { one, two, inf };

// Throws invalid_argument naming the op unless p is 1, 2 or inf.
NormOrder norm_order(const OpDef& op, const Attrs& attrs);

}  // namespace kiln::reduction
