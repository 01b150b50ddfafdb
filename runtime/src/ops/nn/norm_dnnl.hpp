// The f32 forward of layer normalisation on oneDNN.
#pragma once

#include "kiln/runtime.hpp"

namespace kiln::nn {

// Normalises each row of `input` seen as [rows, size].
void dnnl_layer_norm(Runtime& rt, const Tensor& input, int64_t rows, int64_t size, const Tensor& weight,
                     const Tensor& bias, double eps, Tensor& output);

}  // namespace kiln::nn
