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

// The row-major positions of the input elements that fold into each output
// element of a reduction over `dims` (empty: all), outputs in row-major
// order of the kept dimensions, each group in row-major order.
inline std::vector<std::vector<int64_t>> reduce_group_positions(const Shape& shape, const std::vector<int>& dims) {
  std::vector<bool> reduced(size_t(shape.rank()), dims.empty());
  for (int d : dims) reduced[size_t(d < 0 ? d + shape.rank() : d)] = true;
  int64_t outputs = 1;
  for (int d = 0; d < shape.rank(); ++d)
    if (!reduced[size_t(d)]) outputs *= shape[d];
  std::vector<std::vector<int64_t>> groups(static_cast<size_t>(outputs));
  for (int64_t i = 0; i < shape.numel(); ++i) {
    int64_t rest = i, out = 0, scale = 1;
    for (int d = shape.rank() - 1; d >= 0; --d) {
      const int64_t idx = rest % shape[d];
      rest /= shape[d];
      if (reduced[size_t(d)]) continue;
      out += idx * scale;
      scale *= shape[d];
    }
    groups[size_t(out)].push_back(i);
  }
  return groups;
}

// The input values that fold into each output element of a reduction over
// `dims` (empty: all), outputs in row-major order of the kept dimensions.
inline std::vector<std::vector<double>> reduce_groups(const Shape& shape, const std::vector<double>& x,
                                                      const std::vector<int>& dims) {
  std::vector<std::vector<double>> groups;
  for (const std::vector<int64_t>& positions : reduce_group_positions(shape, dims)) {
    std::vector<double>& g = groups.emplace_back();
    for (int64_t i : positions) g.push_back(x[size_t(i)]);
  }
  return groups;
}

// One value per group, from fn(group).
template <class Fn>
std::vector<double> per_group(const std::vector<std::vector<double>>& groups, Fn fn) {
  std::vector<double> out;
  for (const std::vector<double>& g : groups) out.push_back(fn(g));
  return out;
}

// The shape of a reduction's output.
inline Shape reduced_shape(const Shape& shape, const std::vector<int>& dims, bool keepdim) {
  Shape out;
  for (int d = 0; d < shape.rank(); ++d) {
    bool reduced = dims.empty();
    for (int r : dims) reduced = reduced || r == d || r == d - shape.rank();
    if (!reduced) out.push_back(shape[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

}  // namespace kiln::test
