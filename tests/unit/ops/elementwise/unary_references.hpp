// Plain double-precision references of the unary functions whose formulas
// are more than one library call, written from PyTorch's definitions (NaN
// in, NaN out; sign(NaN) is NaN and sign(0) is 0).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>

namespace kiln::test {

// torch.nn.functional.softplus(x, beta, threshold).
inline std::function<double(double)> softplus_reference(double beta, double threshold) {
  return [=](double x) { return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta; };
}

inline double hardswish_reference(double x) {
  if (std::isnan(x)) return x;
  return x * std::min(std::max(x + 3, 0.0), 6.0) / 6;
}

inline double mish_reference(double x) { return x * std::tanh(std::log1p(std::exp(x))); }

// NaN gives 0, as PyTorch's sign does.
inline double sign_reference(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }

}  // namespace kiln::test
