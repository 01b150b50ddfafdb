#include "dense_inputs.hpp"

#include <algorithm>

namespace kiln {

std::vector<Tensor> dense_copies(Runtime& rt, std::span<const Tensor> inputs) {
  std::vector<Tensor> dense;
  if (std::all_of(inputs.begin(), inputs.end(), [](const Tensor& t) { return !t.defined() || t.is_contiguous(); }))
    return dense;
  dense.reserve(inputs.size());
  for (const Tensor& t : inputs) dense.push_back(t.defined() && !t.is_contiguous() ? rt.contiguous(t) : t);
  return dense;
}

}  // namespace kiln
