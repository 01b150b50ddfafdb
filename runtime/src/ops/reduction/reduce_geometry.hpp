// The geometry of a reduction over some dimensions of a (possibly strided)
// tensor: which dimensions are kept, which are reduced, and how to walk the
// input elements that fold into each output element.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/ops/op_def.hpp"
#include "kiln/runtime.hpp"

namespace kiln::reduction {

struct ReduceGeometry {
  Shape kept_shape, kept_strides;        // output elements, row-major over the kept dims
  Shape reduced_shape, reduced_strides;  // the elements folded into one output
  Shape output_shape;                    // kept dims, with 1s in place of reduced ones under keepdim
  int64_t reduced_count = 1;
};

// `dims` empty means every dimension; negative dims count from the end.
// Throws invalid_argument naming the op for an out-of-range or repeated dim.
ReduceGeometry reduce_geometry(const OpDef& op, const Shape& shape, const Shape& strides,
                               const std::vector<int64_t>& dims, bool keepdim);
inline ReduceGeometry reduce_geometry(const OpDef& op, const Shape& shape, const std::vector<int64_t>& dims,
                                      bool keepdim) {
  return reduce_geometry(op, shape, contiguous_strides(shape), dims, keepdim);
}
// Geometry from an op's "dims" and "keepdim" attributes.
ReduceGeometry reduce_geometry(const OpDef& op, const Shape& shape, const Shape& strides, const Attrs& attrs);
inline ReduceGeometry reduce_geometry(const OpDef& op, const Shape& shape, const Attrs& attrs) {
  return reduce_geometry(op, shape, contiguous_strides(shape), attrs);
}

// Calls fn(o, base) for every output element o, in parallel, where base is the
// input offset (in elements) of the first element that folds into o.
template <class Fn>
void for_each_output(ThreadPool& pool, const ReduceGeometry& g, Fn&& fn) {
  const int64_t grain = std::max<int64_t>(1, cpu::kElementGrain / std::max<int64_t>(1, g.reduced_count));
  pool.parallel_for(g.kept_shape.numel(), grain, [&](int64_t begin, int64_t end) {
    cpu::for_each_offset2(g.kept_shape, g.kept_strides, g.kept_strides, begin, end,
                          [&](int64_t o, int64_t base, int64_t) { fn(o, base); });
  });
}

// Calls fn(offset) for every input element that folds into the output whose
// first element is at `base`.
template <class Fn>
void for_each_reduced(const ReduceGeometry& g, int64_t base, Fn&& fn) {
  cpu::for_each_offset2(g.reduced_shape, g.reduced_strides, g.reduced_strides, 0, g.reduced_count,
                        [&](int64_t, int64_t off, int64_t) { fn(base + off); });
}

}  // namespace kiln::reduction
