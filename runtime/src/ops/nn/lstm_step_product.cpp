#include "lstm_step_product.hpp"

#include <cstddef>

#include "kiln/kernels/cpu/block_product.hpp"
#include "kiln/kernels/cpu/lanes8.hpp"
#include "kiln/kernels/cpu/vector_isa.hpp"

namespace kiln::nn::lstm {
namespace {

constexpr int64_t kColumns = 16;  // columns of b per panel: one block product's width

// Panel by panel, every block of rows of `in` against it: a panel (H or
// 4H rows of sixteen floats, 4-16 KB at the usual sizes) stays in L1 while
// the few rows of a thread pass it.
KILN_AVX2_FMA void multiply_panels(const float* panels, int64_t depth, int64_t n, const float* in, int64_t rows,
                                   float* out) {
  for (int64_t col = 0; col < n; col += kColumns) {
    const float* panel = panels + col * depth;
    cpu::over_row_blocks(rows, [&]<int R>(int64_t row) {
      cpu::block_product<R, false>(depth, in + row * depth, depth, 1, panel, kColumns, out + row * n + col, n);
    });
  }
}

}  // namespace

bool step_product_takes(int64_t hidden) {
  return hidden % kColumns == 0 && cpu::vector_isa() != cpu::VectorIsa::plain;
}

PackedWeight::PackedWeight(const float* b, int64_t depth, int64_t n, int64_t row_step, int64_t column_step)
    : depth_(depth), n_(n), panels_(std::size_t(depth * n)) {
  float* p = panels_.data();
  for (int64_t col = 0; col < n; col += kColumns)
    for (int64_t d = 0; d < depth; ++d)
      for (int64_t j = col; j < col + kColumns; ++j) *p++ = b[d * row_step + j * column_step];
}

PackedWeight PackedWeight::hidden_to_gates(const float* weight_hh, int64_t hidden) {
  return PackedWeight(weight_hh, hidden, 4 * hidden, 1, hidden);
}

PackedWeight PackedWeight::gates_to_hidden(const float* weight_hh, int64_t hidden) {
  return PackedWeight(weight_hh, 4 * hidden, hidden, hidden, 1);
}

void PackedWeight::multiply(const float* in, int64_t rows, float* out) const {
  multiply_panels(panels_.data(), depth_, n_, in, rows, out);
}

}  // namespace kiln::nn::lstm
