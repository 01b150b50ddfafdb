// The fused optimizer updates "sgd_update" and "adam_update": in place, no
// outputs, no backward. Their one variadic input holds the tensor lists one
// after the other (params[n], grads[n], then the state lists), the number of
// lists following from the attributes; every tensor of a call shares the
// parameters' dtype and device, is contiguous, and has its parameter's shape.
#pragma once

#include <span>

#include "kiln/ops/registry.hpp"

namespace kiln::optim {

// The list names of a call, in input order.
std::span<const char* const> sgd_list_names(const OpDef& op, const Attrs& attrs);
std::span<const char* const> adam_list_names(const OpDef& op, const Attrs& attrs);

// Entry i of list `list` in a call with `lists` lists.
inline const Tensor& list_entry(std::span<const Tensor> inputs, int lists, int list, size_t i) {
  return inputs[size_t(list) * (inputs.size() / size_t(lists)) + i];
}

void register_cpu_kernels(OpRegistry& r);
#ifdef KILN_WITH_CUDA
void register_cuda_kernels(OpRegistry& r);
#endif

}  // namespace kiln::optim
