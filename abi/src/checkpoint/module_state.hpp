// A model's state as PyTorch's state_dict names it: every parameter and
// buffer under its dotted path ("0.weight", "conv1.bias", "bn.running_mean").
#pragma once

#include "checkpoint/tensor_file.hpp"
#include "kiln/kiln.h"

namespace kiln::abi {

// The parameters, then the buffers, of `model`, in the module's order.
StateTensors module_state(const kiln_module* model);

}  // namespace kiln::abi
