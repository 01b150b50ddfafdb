#include "matmul_transposed_f32.hpp"

#include <algorithm>

#include "kiln/kernels/cpu/block_product.hpp"
#include "kiln/kernels/cpu/lanes8.hpp"
#include "kiln/kernels/cpu/vector_isa.hpp"

namespace kiln::nn {
namespace {

constexpr int64_t kColumns = 16;    // outputs per block row
constexpr int64_t kShortest = 256;  // rows of a and b below which oneDNN keeps the product
// Outputs below which oneDNN keeps it too: on the view, its gemm ran
// [2048, 384]^T @ [2048, 128], [2048, 128]^T @ [2048, 128] and the 65- and
// 64-wide products of the suite's models as fast as this kernel or faster.
constexpr int64_t kFewestOutputs = 1 << 16;
constexpr int64_t kSlice = 256;     // rows of a and b per slice: b's sixteen columns of it take half of L1

// Column blocks [first_block, last_block) of c = a^T b: for each slice of
// k, each block of sixteen columns against every six rows of c (six
// adjacent floats of each row of a's slice), the first slice writing c and
// the others adding to it. The block's slice of b is copied into one run
// first: read in place, its rows (a power of two apart, often) fell into a
// few L1 sets and did not stay there while the rows of c passed. Packing a
// as well cost more than it saved.
KILN_AVX2_FMA void column_blocks(const float* a, const float* b, int64_t k, int64_t m, int64_t n,
                                    int64_t first_block, int64_t last_block, float* c) {
  alignas(64) float b_run[kSlice * kColumns];
  for (int64_t k0 = 0; k0 < k; k0 += kSlice) {
    const int64_t depth = std::min(kSlice, k - k0);
    for (int64_t block = first_block; block < last_block; ++block) {
      const int64_t col = block * kColumns;
      for (int64_t d = 0; d < depth; ++d) {
        cpu::Lanes8 low, high;
        cpu::load8(low, b + (k0 + d) * n + col);
        cpu::load8(high, b + (k0 + d) * n + col + 8);
        cpu::store8(b_run + d * kColumns, low);
        cpu::store8(b_run + d * kColumns + 8, high);
      }
      cpu::over_row_blocks(m, [&]<int R>(int64_t row) {
        const float* a_rows = a + k0 * m + row;
        float* c_block = c + row * n + col;
        if (k0 == 0) cpu::block_product<R, false>(depth, a_rows, 1, m, b_run, kColumns, c_block, n);
        else cpu::block_product<R, true>(depth, a_rows, 1, m, b_run, kColumns, c_block, n);
      });
    }
  }
}

}  // namespace

bool transposed_product_takes(const Tensor& a, const Tensor& b, const Tensor& bias, const Tensor& out,
                              bool activation) {
  if (a.dtype() != DType::f32 || out.rank() != 2 || a.rank() != 2 || b.rank() != 2 || bias.defined() || activation)
    return false;
  const int64_t m = a.dim(0), k = a.dim(1), n = b.dim(1);
  return k >= kShortest && m * n >= kFewestOutputs && n % kColumns == 0 && a.strides() == Shape{1, m} &&
         b.strides() == Shape{n, 1} && cpu::vector_isa() == cpu::VectorIsa::avx2;
}

void transposed_product_f32(Runtime& rt, const Tensor& a, const Tensor& b, Tensor& out) {
  const int64_t m = a.dim(0), k = a.dim(1), n = b.dim(1);
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* pc = out.data<float>();
  rt.thread_pool().parallel_for(n / kColumns, 1, [&](int64_t begin, int64_t end) {
    column_blocks(pa, pb, k, m, n, begin, end, pc);
  });
}

}  // namespace kiln::nn
