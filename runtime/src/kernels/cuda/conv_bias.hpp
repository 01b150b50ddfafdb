// y[n, o, ...] += bias[o] for a dense [N, O, ...] tensor on a GPU, in y's
// floating dtype: the bias of conv2d, added after cuDNN's convolution.
#pragma once

#include "kiln/tensor.hpp"

namespace kiln::cuda {

void add_channel_bias(Tensor& y, const Tensor& bias);

}  // namespace kiln::cuda
