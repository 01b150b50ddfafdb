// ResNet-18's 3x3 stride-1 convolutions (CIFAR variant, batch 32) and the
// Fashion-MNIST CNN's first layer, each pass alone, in a default runtime and
// in one that keeps oneDNN's direct kernels: what kiln's own kernels (on
// AVX2 CPUs: Winograd's, and the weight gradient over few input channels)
// win or lose per layer.
#pragma once

#include "kiln/runtime.hpp"

namespace kiln::bench {

void bench_resnet_convs();

}  // namespace kiln::bench
