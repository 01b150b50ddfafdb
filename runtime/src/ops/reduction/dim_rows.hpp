// A contiguous tensor seen as [outer, n, inner] around one dimension: rows
// of n elements at stride inner, for the ops that walk a dimension in order
// (cumsum, sort, topk).
#pragma once

#include <algorithm>
#include <cstdint>

#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/runtime.hpp"
#include "ordering.hpp"

namespace kiln::reduction {

struct DimRows {
  int dim = 0;
  int64_t outer = 1, n = 1, inner = 1;

  int64_t count() const { return outer * inner; }
  // Offset of element 0 of row r in a tensor whose walked dim has `length`.
  int64_t base(int64_t r, int64_t length) const { return (r / inner) * length * inner + r % inner; }
  int64_t base(int64_t r) const { return base(r, n); }
};

// The rows of `shape` along the op's integer attribute "dim".
inline DimRows dim_rows(const OpDef& op, const Shape& shape, const Attrs& attrs) {
  DimRows s;
  s.dim = single_dim(op, attrs, shape);
  for (int d = 0; d < shape.rank(); ++d) {
    if (d < s.dim) s.outer *= shape[d];
    else if (d == s.dim) s.n = shape[d];
    else s.inner *= shape[d];
  }
  return s;
}

// Calls fn(first, last) for ranges of rows, in parallel.
template <class Fn>
void for_row_ranges(ThreadPool& pool, const DimRows& s, Fn&& fn) {
  const int64_t grain = std::max<int64_t>(1, cpu::kElementGrain / std::max<int64_t>(1, s.n));
  pool.parallel_for(s.count(), grain, fn);
}

}  // namespace kiln::reduction
