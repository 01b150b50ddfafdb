// Walking strided tensors on the CPU: the element offsets of a view in
// row-major order, split across the runtime's threads.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "kiln/shape.hpp"
#include "kiln/util/thread_pool.hpp"

namespace kiln::cpu {

// Calls fn(i, offsets, run) for the elements [begin, end) of `shape` in
// row-major order, one run along the innermost dimension at a time:
// element i + k of the run (k < run) is at offsets[n] + k * strides[n][last]
// under each stride set n (a stride of 0 broadcasts). Offsets are in
// elements. The odometer steps once per run, not once per element.
template <size_t N, class Fn>
void for_each_runs(const Shape& shape, const std::array<Shape, N>& strides, int64_t begin, int64_t end, Fn&& fn) {
  if (begin >= end) return;
  const int rank = shape.rank();
  std::array<int64_t, N> offsets{};
  if (rank == 0) {
    fn(begin, offsets, end - begin);
    return;
  }
  int64_t index[kMaxDims] = {};
  int64_t rest = begin;
  for (int d = rank - 1; d >= 0; --d) {
    index[d] = shape[d] ? rest % shape[d] : 0;
    rest = shape[d] ? rest / shape[d] : 0;
    for (size_t n = 0; n < N; ++n) offsets[n] += index[d] * strides[n][d];
  }
  const int last = rank - 1;
  for (int64_t i = begin; i < end;) {
    const int64_t run = std::min(end - i, shape[last] - index[last]);
    fn(i, offsets, run);
    i += run;
    index[last] += run;
    for (size_t n = 0; n < N; ++n) offsets[n] += run * strides[n][last];
    for (int d = last; d > 0 && index[d] == shape[d]; --d) {  // odometer carry
      for (size_t n = 0; n < N; ++n) offsets[n] += strides[n][d - 1] - index[d] * strides[n][d];
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

// Calls fn(i, offset_a, offset_b) for every element index i in [begin, end)
// of `shape`, with the element offsets under two stride sets (a stride of 0
// broadcasts). Offsets are in elements.
template <class Fn>
void for_each_offset2(const Shape& shape, const Shape& strides_a, const Shape& strides_b, int64_t begin, int64_t end,
                      Fn&& fn) {
  const int last = shape.rank() - 1;
  const int64_t step_a = last >= 0 ? strides_a[last] : 0, step_b = last >= 0 ? strides_b[last] : 0;
  for_each_runs<2>(shape, {strides_a, strides_b}, begin, end,
                   [&](int64_t i, const std::array<int64_t, 2>& off, int64_t run) {
                     for (int64_t k = 0; k < run; ++k) fn(i + k, off[0] + k * step_a, off[1] + k * step_b);
                   });
}

// Copies the elements of `shape` (each `width` bytes: 1, 2, 4 or 8) from
// src, laid out by src_strides, to dst, laid out by dst_strides, on the
// pool's threads. Runs dense on both sides are copied whole.
void copy_strided(ThreadPool& pool, size_t width, const Shape& shape, const void* src, const Shape& src_strides,
                  void* dst, const Shape& dst_strides);

// Grain size that keeps a chunk of simple element work worth a thread handoff.
inline constexpr int64_t kElementGrain = 1 << 15;

// Strides that read a tensor of shape `from` as if broadcast to `to`
// (0 where `from` has size 1 or lacks the dimension).
Shape broadcast_strides(const Shape& from, const Shape& from_strides, const Shape& to);

}  // namespace kiln::cpu
