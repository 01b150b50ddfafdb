// The sum of a long vector on a GPU, for losses reduced to one value:
// blocks fold fixed chunks into partial sums, repeatedly, until one block
// folds the rest. The chunks do not depend on the launch, so the result is
// the same on every run.
#pragma once

#include "element.cuh"
#include "rows.cuh"
#include "kiln/runtime.hpp"

namespace kiln::cuda {

inline constexpr int64_t kTotalChunk = 4096;

template <class A>
struct ChunkSum {
  const A* values;
  A* partial;
  int64_t n;
  __device__ void operator()(const Team& team, int64_t r) const {
    const int64_t begin = r * kTotalChunk;
    const int64_t length = n - begin < kTotalChunk ? n - begin : kTotalChunk;
    const A s = team.fold(length, A(0), Plus{}, [&](int64_t k) { return values[begin + k]; });
    if (team.lane == 0) partial[r] = s;
  }
};

// Sums of chunks of `values` (a vector of A) until at most one chunk is left.
template <class A>
Tensor fold_to_one_chunk(Runtime& rt, Tensor values) {
  while (values.numel() > kTotalChunk) {
    const int64_t parts = (values.numel() + kTotalChunk - 1) / kTotalChunk;
    Tensor partial = rt.empty({parts}, values.dtype(), values.device());
    const ChunkSum<A> sum{values.data<A>(), partial.data<A>(), values.numel()};
    run_rows("a partial sum", values.device().index, parts, kTotalChunk, sum);
    values = partial;
  }
  return values;
}

// out[0] = sum(values) / sum(counts), or / divisor without counts.
template <class Out, class A>
struct FinalTotal {
  const A* values;
  int64_t n;
  const A* counts;
  int64_t count_n;
  A divisor;
  Out* out;
  __device__ void operator()(const Team& team, int64_t) const {
    const A total = team.fold(n, A(0), Plus{}, [&](int64_t k) { return values[k]; });
    const A d = counts ? team.fold(count_n, A(0), Plus{}, [&](int64_t k) { return counts[k]; }) : divisor;
    if (team.lane == 0) out[0] = from_math<Out>(total / d);
  }
};

// out[0] (of element type Out) = sum(values) / divisor, or / sum(counts)
// when counts is defined; values and counts are vectors of A.
template <class Out, class A>
void total_into(Runtime& rt, const Tensor& values, const Tensor& counts, A divisor, Tensor& out) {
  const Tensor v = fold_to_one_chunk<A>(rt, values);
  const Tensor k = counts.defined() ? fold_to_one_chunk<A>(rt, counts) : Tensor();
  const FinalTotal<Out, A> total{v.data<A>(), v.numel(), k.defined() ? k.data<A>() : nullptr,
                                 k.defined() ? k.numel() : 0, divisor, out.data<Out>()};
  // One row, folded by a whole block.
  run_rows("a total", out.device().index, 1, kTotalChunk, total);
}

}  // namespace kiln::cuda
