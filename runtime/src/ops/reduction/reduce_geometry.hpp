// The geometry of a reduction over some dimensions of a (possibly strided)
// tensor: which dimensions are kept, which are reduced, and how to walk the
// input elements that fold into each output element.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kiln/kernels/cpu/dense_sum.hpp"
#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/ops/op_def.hpp"
#include "kiln/runtime.hpp"

namespace kiln::reduction {

struct ReduceGeometry {
  Shape kept_shape, kept_strides;        // output elements, row-major over the kept dims
  Shape reduced_shape, reduced_strides;  // the elements folded into one output
  Shape output_shape;                    // kept dims, with 1s in place of reduced ones under keepdim
  int64_t reduced_count = 1;
  bool reduced_dense = false;  // the elements of each output are one run, one after another
  // Otherwise they may be runs of this many elements (the trailing reduced
  // dims that are dense), one per position of the leading reduced dims:
  // the planes of [N, C, H, W] summed over N, H and W.
  int64_t inner_run = 1;
  Shape outer_shape, outer_strides;  // the leading reduced dims, outside the runs
  // When the reduced elements of output o sit at o + r * columns for r in
  // [0, reduced_count): a dense [reduced_count, columns] matrix summed over
  // its rows, as a bias gradient sums [batch, features]. 0 otherwise.
  int64_t columns = 0;
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

// Elements of one output summed by one task: a full reduction of a large
// tensor is split into runs this long, summed in parallel, whose sums are
// then added in order, so that the result is the same for any thread count.
inline constexpr int64_t kSumRun = int64_t(1) << 15;
// Shorter runs are walked element by element.
inline constexpr int64_t kMinRun = 8;

// Rows of a column sum added into one partial sum, one after another.
inline constexpr int64_t kColumnSumRows = 64;
// Columns one task adds up, so that a task's partial sums stay in cache.
inline constexpr int64_t kColumnSumWidth = 1024;

// Calls write(j, sum) for every column j of a dense [rows, columns] matrix
// with the sum of term(r * columns + j) over its rows. Blocks of
// kColumnSumRows rows are summed row after row into partial sums, a loop
// over adjacent elements the compiler puts in vectors; the partial sums of
// a column are then added in block order, so the result does not depend on
// the thread count.
template <class A, class Term, class Write>
void sum_columns(ThreadPool& pool, int64_t rows, int64_t columns, Term&& term, Write&& write) {
  const int64_t blocks = (rows + kColumnSumRows - 1) / kColumnSumRows;
  const int64_t widths = (columns + kColumnSumWidth - 1) / kColumnSumWidth;
  std::vector<A> partial(size_t(blocks * columns), A(0));
  const int64_t grain = std::max<int64_t>(1, cpu::kElementGrain / (kColumnSumRows * std::min(columns, kColumnSumWidth)));
  pool.parallel_for(blocks * widths, grain, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t block = task / widths, first = task % widths * kColumnSumWidth;
      const int64_t last = std::min(columns, first + kColumnSumWidth);
      A* part = partial.data() + block * columns;
      for (int64_t r = block * kColumnSumRows; r < std::min(rows, (block + 1) * kColumnSumRows); ++r)
        for (int64_t j = first; j < last; ++j) part[j] += term(r * columns + j);
    }
  });
  pool.parallel_for(columns, std::max<int64_t>(1, cpu::kElementGrain / blocks), [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      A s = 0;
      for (int64_t block = 0; block < blocks; ++block) s += partial[size_t(block * columns + j)];
      write(j, s);
    }
  });
}

// Calls write(o, sum) for every output o with the sum of term(offset) over
// its elements: the additive reductions (sum, mean, norms).
template <class A, class Term, class Write>
void sum_each_output(ThreadPool& pool, const ReduceGeometry& g, Term&& term, Write&& write) {
  if (g.reduced_dense && g.kept_shape.numel() == 1 && g.reduced_count > kSumRun) {
    std::vector<A> runs(size_t((g.reduced_count + kSumRun - 1) / kSumRun));
    pool.parallel_for(int64_t(runs.size()), 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        runs[size_t(r)] = cpu::dense_sum<A>(r * kSumRun, std::min(kSumRun, g.reduced_count - r * kSumRun), term);
    });
    A total = 0;
    for (A s : runs) total += s;
    write(0, total);
    return;
  }
  if (g.columns > 0 && g.reduced_count > 1) {
    sum_columns<A>(pool, g.reduced_count, g.columns, term, write);
    return;
  }
  for_each_output(pool, g, [&](int64_t o, int64_t base) {
    if (g.reduced_dense) {
      write(o, cpu::dense_sum<A>(base, g.reduced_count, term));
      return;
    }
    A s = 0;
    if (g.inner_run >= kMinRun) {
      const int64_t runs = g.reduced_count / g.inner_run;
      cpu::for_each_offset2(g.outer_shape, g.outer_strides, g.outer_strides, 0, runs,
                            [&](int64_t, int64_t off, int64_t) { s += cpu::dense_sum<A>(base + off, g.inner_run, term); });
      write(o, s);
      return;
    }
    for_each_reduced(g, base, [&](int64_t i) { s += term(i); });
    write(o, s);
  });
}

}  // namespace kiln::reduction
