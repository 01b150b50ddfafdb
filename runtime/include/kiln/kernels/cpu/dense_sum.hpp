// A sum over adjacent elements that does not wait on each addition.
#pragma once

#include <cstdint>

namespace kiln::cpu {

// The sum of term(offset) over `count` elements from `first`, one after
// another, in kLanes interleaved partial sums: independent additions the
// CPU overlaps (and the compiler may put in vectors), where one running sum
// would wait for each addition before the next.
template <class A, class Term>
A dense_sum(int64_t first, int64_t count, Term&& term) {
  constexpr int kLanes = 8;
  A part[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes)
    for (int k = 0; k < kLanes; ++k) part[k] += term(first + i + k);
  for (; i < count; ++i) part[0] += term(first + i);
  return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

}  // namespace kiln::cpu
