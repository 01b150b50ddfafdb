// oneDNN 2.6 has no f16 matrix products or convolutions on CPUs without
// AVX512_FP16 (see dnnl_precision.hpp), which is most of them. The CPU's
// f16 kernels of those ops therefore widen their f16 operands to f32, run
// the f32 kernel and round each result to f16 once. That is exactly what
// an f16 product with f32 accumulation must give, and what oneDNN's f16
// kernels and cuBLAS give: the low-precision result, not an approximation
// of it.
#pragma once

#include "kiln/ops/op_def.hpp"

namespace kiln::nn {

// Runs `f32_kernel` on f32 copies of the call's f16 inputs and rounds its
// f32 results into the call's f16 outputs.
void run_f16_through_f32(const KernelCall& c, KernelFn f32_kernel);

// The f16 kernel of an op whose f32 kernel is `f32_kernel`.
template <KernelFn f32_kernel>
void f16_through_f32(const KernelCall& c) {
  run_f16_through_f32(c, f32_kernel);
}

}  // namespace kiln::nn
