// The products of each step of the f32 LSTM recurrence, by kiln's own AVX2
// kernel: g = h W_hh^T in the forward, dh = dg W_hh in the backward. Each
// step's product is small ([rows, H] by [H, 4H] with a few rows per
// thread), and oneDNN's sgemm packed W_hh again on every call of every
// step; here it is packed once per sequence, as PackedWeight, into panels
// of sixteen columns that each step then reads in order.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::nn::lstm {

// Whether the kernel runs the products of a recurrence with this hidden
// size on this CPU (AVX2 or wider, H a multiple of sixteen).
bool step_product_takes(int64_t hidden);

// The right-hand side b [depth, n] of out[rows, n] = in[rows, depth] b,
// packed: panel p holds columns [16p, 16p + 16) of every row of b in turn.
class PackedWeight {
 public:
  // b = W_hh^T, [H, 4H]: the forward's h -> gates.
  static PackedWeight hidden_to_gates(const float* weight_hh, int64_t hidden);
  // b = W_hh, [4H, H]: the backward's gates -> h.
  static PackedWeight gates_to_hidden(const float* weight_hh, int64_t hidden);

  // out[rows, n] = in[rows, depth] b, both rows dense.
  void multiply(const float* in, int64_t rows, float* out) const;

 private:
  // b(d, j) at b[d * row_step + j * column_step].
  PackedWeight(const float* b, int64_t depth, int64_t n, int64_t row_step, int64_t column_step);

  int64_t depth_, n_;
  std::vector<float> panels_;
};

}  // namespace kiln::nn::lstm
