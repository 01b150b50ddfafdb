// Comparing kiln's result with PyTorch's: the same dtype and shape, NaN in
// the same places, infinities of the same sign, and finite values within a
// tolerance set by the dtype (integers and booleans exactly).
#pragma once

#include <string>

#include "kiln/runtime.hpp"

namespace kiln::test {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};
Tolerance tolerance_for(DType t);

struct Difference {
  double max_abs = 0;  // the largest |actual - expected| over finite values
  double worst = 0;    // the largest |actual - expected| / (atol + rtol |expected|); above 1 fails
  std::string failure;  // empty when the result matches; else the first fault found

  bool ok() const { return failure.empty(); }
  // Keeps the larger figures and the first failure.
  void merge(const Difference& other);
};

Difference compare_tensors(Runtime& rt, const Tensor& actual, const Tensor& expected);

}  // namespace kiln::test
