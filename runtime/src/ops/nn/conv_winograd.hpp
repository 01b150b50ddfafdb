// 3x3 and 5x5 stride-1 f32 convolutions (ResNet's, VGG's; LeNet's and the
// Fashion-MNIST network's) by Winograd's F(4x4, 3x3) and F(4x4, 5x5) on CPUs
// with AVX2 and FMA, AVX-512 ones included. oneDNN's direct kernels already
// run at about 80% of the machine's peak, so the only way to go faster is to
// do fewer multiplications (oneDNN 2.6 has Winograd kernels for 3x3 on
// AVX-512 only, and on an AMD Zen 4 did not pick them for ResNet's layers,
// where these ran 1.6-1.8 times as fast as its direct ones): per channel pair and 4x4
// block of outputs, 36 where the direct form takes 144 (3x3 filters) and 64
// where it takes 400 (5x5). All three passes take this path (the input
// gradient is the forward convolution of the output gradient with the
// filters rotated and transposed; the weight gradient multiplies the
// transforms of input and output gradient). The largest error against f64
// is up to about 1e-5 of the largest value (3e-6 to 8.5e-6 on the conv2d tests'
// shapes), a few times the direct kernels'; `direct_convolutions` in the
// runtime options keeps oneDNN's.
#pragma once

#include "conv_geometry.hpp"
#include "kiln/runtime.hpp"

namespace kiln::nn {

// True when this runtime runs a convolution of geometry g in dtype this way:
// f32, 3x3 or 5x5, stride and dilation 1, no groups, padding up to the
// filter's size less one, 16 channels or more on both sides (fewer would be
// mostly padding), 128 tiles or more (conv_winograd.cpp), direct
// convolutions not asked for, and a CPU with AVX2 and FMA.
bool winograd_takes(const Runtime& rt, const Conv2dGeometry& g, DType dtype);

// The same calls as conv_kernels.hpp's, for geometries winograd_takes.
void conv2d_forward_winograd(Runtime& rt, const Conv2dGeometry& g, const Tensor& input, const Tensor& weight,
                             const Tensor& bias, Tensor& output);
void conv2d_backward_input_winograd(Runtime& rt, const Conv2dGeometry& g, const Tensor& grad_output,
                                    const Tensor& weight, Tensor& grad_input);
void conv2d_backward_weight_winograd(Runtime& rt, const Conv2dGeometry& g, const Tensor& grad_output,
                                     const Tensor& input, Tensor& grad_weight);

}  // namespace kiln::nn
