// One (batched) matrix product through cuBLASLt, in cuBLAS's column-major
// terms: d[m, n] = act(op(a)[m, k] @ op(b)[k, n] (+ bias[m] on every
// column)), `batch` times, each operand `batch_stride` elements after the
// previous. The bias and the activation ride in cuBLASLt's epilogue where it
// has one for the dtype and layout.
// A plan (descriptors, layouts, the heuristic's algorithm) is made once per
// problem and device and reused.
#pragma once

#include <cstdint>

#include "../../ops/nn/linear_activation.hpp"
#include "kiln/runtime.hpp"

namespace kiln::cuda {

struct GemmOperand {
  const void* data = nullptr;
  bool transposed = false;   // op(x) = x^T: stored [k, m] rather than [m, k] (a)
  int64_t ld = 0;            // elements between columns as stored
  int64_t batch_stride = 0;  // 0: one matrix shared by the whole batch
};

struct Gemm {
  DType dtype = DType::f32;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  GemmOperand a, b;
  void* d = nullptr;  // dense: ld m, batch stride m * n
  const void* bias = nullptr;  // [m] of dtype, or null
  nn::LinearActivation activation = nn::LinearActivation::none;  // after the bias
};

// Runs `g` on cuda:`device` (k >= 1), on compute_stream(device). f32 rounds
// to TF32 inside when the runtime allows it; f16 and bf16 accumulate in f32.
// Returns whether g.activation was applied: false when no algorithm fuses
// it (or the product takes several cuBLASLt calls), and the caller applies
// it to d then.
bool cublaslt_gemm(Runtime& rt, int device, const Gemm& g);

}  // namespace kiln::cuda
