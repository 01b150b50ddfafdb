// The weight gradient's product on AVX2: c [m, n] = a^T b for row-major
// a [k, m] and b [k, n] with k (the rows a batch of tokens or samples
// flattens to) long: a sum of k outer products, as linear's backward forms
// grad_weight = grad_output^T @ input with grad_output^T a transposed view.
// oneDNN 2.6's AVX2 gemm ran the character transformer's two such products
// ([2048, 128]^T @ [2048, 512] and [2048, 512]^T @ [2048, 128]) at 90-120
// GFLOP/s on a 205 GFLOP/s machine; kiln's blocks of six by sixteen outputs
// over slices of k run the first at 160 (`kiln_bench pieces`: 1640-1700 us
// against oneDNN's 2200-2300 with the operand made dense first) and the
// second at 150 (1810 us against 1500-1580 dense, 2200-2900 as a view).
#pragma once

#include "kiln/runtime.hpp"

namespace kiln::nn {

// True when matmul(a, b) -> out runs here: f32 on an AVX2 CPU without
// AVX-512 (there oneDNN's AVX-512 gemm was faster: 1250-1320 us against
// 1360-1680 for the first product above on a Zen 4), 2-D, a the transpose of a dense
// [k, m] matrix, b dense, n a multiple of 16, k at least 256, m * n at least
// 65536, no bias and no activation.
bool transposed_product_takes(const Tensor& a, const Tensor& b, const Tensor& bias, const Tensor& out,
                              bool activation);

void transposed_product_f32(Runtime& rt, const Tensor& a, const Tensor& b, Tensor& out);

}  // namespace kiln::nn
