// Walking strided tensors on the CPU: the element offsets of a view in
// row-major order, split across the runtime's threads.
#pragma once

#include <cstdint>

#include "kiln/shape.hpp"
#include "kiln/util/thread_pool.hpp"

namespace kiln::cpu {

// Calls fn(i, offset_a, offset_b) for every element index i in [begin, end)
// of `shape`, with the element offsets under two stride sets (a stride of 0
// broadcasts). Offsets are in elements.
template <class Fn>
void for_each_offset2(const Shape& shape, const Shape& strides_a, const Shape& strides_b, int64_t begin, int64_t end,
                      Fn&& fn) {
  const int rank = shape.rank();
  if (begin >= end) return;
  int64_t index[kMaxDims] = {};
  int64_t off_a = 0, off_b = 0;
  int64_t rest = begin;
  for (int d = rank - 1; d >= 0; --d) {
    index[d] = shape[d] ? rest % shape[d] : 0;
    rest = shape[d] ? rest / shape[d] : 0;
    off_a += index[d] * strides_a[d];
    off_b += index[d] * strides_b[d];
  }
  for (int64_t i = begin; i < end; ++i) {
    fn(i, off_a, off_b);
    for (int d = rank - 1; d >= 0; --d) {  // odometer step
      ++index[d];
      off_a += strides_a[d];
      off_b += strides_b[d];
      if (index[d] < shape[d]) break;
      off_a -= index[d] * strides_a[d];
      off_b -= index[d] * strides_b[d];
      index[d] = 0;
    }
  }
}

// Grain size that keeps a chunk of simple element work worth a thread handoff.
inline constexpr int64_t kElementGrain = 1 << 15;

// Strides that read a tensor of shape `from` as if broadcast to `to`
// (0 where `from` has size 1 or lacks the dimension).
Shape broadcast_strides(const Shape& from, const Shape& from_strides, const Shape& to);

}  // namespace kiln::cpu
