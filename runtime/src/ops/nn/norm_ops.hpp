// The normalisation ops, registered by register_norm_ops (norm_register.cpp),
// and what their kernels share.
#pragma once

#include <cmath>
#include <span>

#include "kiln/tensor.hpp"

namespace kiln {
class OpRegistry;
}

namespace kiln::nn {

void register_batch_norm_ops(OpRegistry& r);  // batch_norm, batch_norm_backward
void register_layer_norm_ops(OpRegistry& r);  // layer_norm, layer_norm_backward
void register_group_norm_ops(OpRegistry& r);  // group_norm, group_norm_backward
void register_instance_norm_op(OpRegistry& r);  // instance_norm (after group_norm, whose kernels it runs)

// Input i of a call, or an undefined tensor where the caller left a trailing
// optional input out.
inline Tensor optional_input(std::span<const Tensor> inputs, size_t i) {
  return i < inputs.size() ? inputs[i] : Tensor();
}

// Mean and biased variance of the n values that for_each(fn) hands to fn,
// in double and in two passes (the second on centred values, which stays
// accurate when the mean is large against the spread).
template <class ForEach>
void mean_and_variance(int64_t n, ForEach for_each, double& mean, double& variance) {
  double sum = 0;
  for_each([&](double v) { sum += v; });
  mean = sum / double(n);
  double squares = 0;
  for_each([&](double v) { squares += (v - mean) * (v - mean); });
  variance = squares / double(n);
}

inline double inverse_std(double variance, double eps) { return 1.0 / std::sqrt(variance + eps); }

}  // namespace kiln::nn
