// Plain-loop references for the reduction tests, written independently of
// the kernels: index arithmetic over doubles in row-major order.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/error.hpp"
#include "kiln/shape.hpp"

namespace kiln::test {

// The input values that fold into each output element of a reduction over
// `dims` (empty: all), outputs in row-major order of the kept dimensions.
inline std::vector<std::vector<double>> reduce_groups(const Shape& shape, const std::vector<double>& x,
                                                      const std::vector<int>& dims) {
  std::vector<bool> reduced(size_t(shape.rank()), dims.empty());
  for (int d : dims) reduced[size_t(d < 0 ? d + shape.rank() : d)] = true;
  int64_t outputs = 1;
  for (int d = 0; d < shape.rank(); ++d)
    if (!reduced[size_t(d)]) outputs *= shape[d];
  std::vector<std::vector<double>> groups(static_cast<size_t>(outputs));
  for (int64_t i = 0; i < shape.numel(); ++i) {
    int64_t rest = i, out = 0, scale = 1;
    for (int d = shape.rank() - 1; d >= 0; --d) {
      const int64_t idx = rest % shape[d];
      rest /= shape[d];
      if (reduced[size_t(d)]) continue;
      out += idx * scale;
      scale *= shape[d];
    }
    groups[size_t(out)].push_back(x[size_t(i)]);
  }
  return groups;
}


}  // namespace kiln::test
