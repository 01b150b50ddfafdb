// A block of a matrix product kept in AVX registers: six rows of sixteen
// outputs in twelve accumulators while the shared operand streams past, the
// inner loop of kiln's own products (Winograd's, the weight gradient's).
// Inlined into functions compiled for AVX2 with FMA.
#pragma once

#include <cstdint>

#include "kiln/kernels/cpu/lanes8.hpp"

namespace kiln::cpu {

// c[r][0, 16) (+)= sum_d a(r, d) b(d)[0, 16) for r < R, a(r, d) at
// a[r * a_row + d * a_step], b(d) at b + d * b_step. Six rows keep twelve
// accumulators in flight, enough to hide the multiply-adds' latency.
template <int R, bool kAccumulate>
[[gnu::always_inline]] inline void block_product(int64_t depth, const float* a, int64_t a_row, int64_t a_step,
                                                 const float* b, int64_t b_step, float* __restrict c,
                                                 int64_t c_row) {
  Lanes8 acc[R][2] = {};
  if (kAccumulate)
    for (int r = 0; r < R; ++r) {
      load8(acc[r][0], c + r * c_row);
      load8(acc[r][1], c + r * c_row + 8);
    }
  for (int64_t d = 0; d < depth; ++d) {
    Lanes8 b0, b1;
    load8(b0, b + d * b_step);
    load8(b1, b + d * b_step + 8);
    const float* ad = a + d * a_step;
    for (int r = 0; r < R; ++r) {
      const float ar = ad[r * a_row];
      acc[r][0] += ar * b0;
      acc[r][1] += ar * b1;
    }
  }
  for (int r = 0; r < R; ++r) {
    store8(c + r * c_row, acc[r][0]);
    store8(c + r * c_row + 8, acc[r][1]);
  }
}

// Calls block.template operator()<R>(first) over `rows` in blocks of six
// rows, then four, two and one for what is left.
template <class Block>
[[gnu::always_inline]] inline void over_row_blocks(int64_t rows, const Block& block) {
  int64_t r = 0;
  for (; r + 6 <= rows; r += 6) block.template operator()<6>(r);
  if (rows - r >= 4) {
    block.template operator()<4>(r);
    r += 4;
  }
  if (rows - r >= 2) {
    block.template operator()<2>(r);
    r += 2;
  }
  if (rows - r == 1) block.template operator()<1>(r);
}

}  // namespace kiln::cpu
