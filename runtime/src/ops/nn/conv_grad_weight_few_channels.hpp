// The weight gradient of a stride-1 f32 convolution over an input of few
// channels: the first layer of an image model ([64, 1, 28, 28] by 32 5x5
// filters in the Fashion-MNIST CNN). oneDNN's kernels block the work by
// input channel, and with one channel they took 3.4 ms alone and 6.1 ms in
// training for that layer's 80 MFLOP weight gradient here; this one runs
// each filter tap as dot products along the output rows, in vectors, two
// output channels per input load: 0.9 to 1.1 ms alone (bench/RESULTS.md).
#pragma once

#include "conv_geometry.hpp"
#include "kiln/runtime.hpp"

namespace kiln::nn {

// f32, stride and dilation 1, no groups, at most 4 input channels, filters
// at most 8 x 8, output rows at least 8 long, on a CPU with AVX2 and FMA
// (AVX-512 ones too: on a Zen 4 the Fashion-MNIST network trained as fast
// or faster with it, and oneDNN's AVX-512 kernel erred by 1.5e-6 of the
// largest value where this one stays under 1e-6).
bool few_channels_grad_weight_takes(const Conv2dGeometry& g, DType dtype);

void conv2d_backward_weight_few_channels(Runtime& rt, const Conv2dGeometry& g, const Tensor& grad_output,
                                         const Tensor& input, Tensor& grad_weight);

}  // namespace kiln::nn
