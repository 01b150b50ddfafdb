// The f32 forward of batch and layer normalisation on oneDNN.
#pragma once

#include <vector>

#include "kiln/runtime.hpp"

namespace kiln::nn {

struct BatchNormTensors {
  const Tensor& input;
  const Tensor& weight;  // each of these four may be undefined
  const Tensor& bias;
  const Tensor& running_mean;
  const Tensor& running_var;
};

// Returns false, having done nothing, for inputs of rank above 5, which the
// primitive does not take; the caller then runs the plain C++ kernel.
// Training: normalises with the batch statistics and returns their mean and
// biased variance per channel in batch_mean / batch_var (the running update
// is the caller's). Evaluation: normalises with the running statistics.
bool dnnl_batch_norm(Runtime& rt, const BatchNormTensors& t, bool training, double eps, Tensor& output,
                     std::vector<double>& batch_mean, std::vector<double>& batch_var);

// Normalises each row of `input` seen as [rows, size].
void dnnl_layer_norm(Runtime& rt, const Tensor& input, int64_t rows, int64_t size, const Tensor& weight,
                     const Tensor& bias, double eps, Tensor& output);

}  // namespace kiln::nn
