// The runtime's fused optimizer updates ("sgd_update", "adam_update") called
// on parameters grouped so that one op call covers each bucket of
// parameters sharing a device, a dtype and an update count. The per-
// parameter update is the same call with one parameter, so both paths give
// the same bits.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "host.hpp"

namespace kiln_optim {

// One parameter's tensors, and its update count (1 for the first).
struct FusedParameter {
  kiln_tensor* param;
  kiln_tensor* grad;
  kiln_tensor* const* state;  // at least the op's state lists
  int64_t step;
};

// The op's attributes for parameters at update count `step`.
using FusedAttrs = std::function<std::vector<kiln_attr>(int64_t step)>;

// Calls `op` once per bucket of `params` with the lists params, grads, then
// the first `n_state` state tensors of each, one list per state tensor.
void run_fused(kiln_runtime* rt, const char* op, std::span<const FusedParameter> params, size_t n_state,
               const FusedAttrs& attrs_for);

}  // namespace kiln_optim
