// Every element of a GPU tensor set to one value, converted exactly as the
// CPU converts it: "full" and the other constant-making ops share it.
#pragma once

#include "kiln/tensor.hpp"

namespace kiln::cuda {

void fill(Tensor& out, double value);

}  // namespace kiln::cuda
