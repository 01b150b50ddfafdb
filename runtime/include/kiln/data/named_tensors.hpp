// The fields of one example or of one batch: named CPU tensors in the order
// the data source (or the transforms) set them.
#pragma once

#include <string>
#include <vector>

#include "kiln/tensor.hpp"

namespace kiln::data {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

using NamedTensors = std::vector<NamedTensor>;

}  // namespace kiln::data
