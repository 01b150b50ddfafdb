// The softmax, or log-softmax, over the classes of f32 scores laid out
// [N, C, D] with D > 1 (a sequence model's [B, V, T]), in that layout:
// vectors run along D, where the scores of one class are adjacent, so
// nothing is transposed. oneDNN 2.6 takes a softmax along a strided axis
// through its reference code, and copying the scores to [N, D, C] rows
// first costs a transposition each way.
#pragma once

#include <cstdint>

#include "kiln/runtime.hpp"

namespace kiln::reduction {

// out[n][k][d] = softmax_k(x[n][.][d])[k], or its log with `log`.
void class_softmax_f32(Runtime& rt, const float* x, int64_t n, int64_t classes, int64_t inner, bool log, float* out);

}  // namespace kiln::reduction
