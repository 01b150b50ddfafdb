// ResNet-18's 3x3 stride-1 convolutions (CIFAR variant, batch 32) and the
// Fashion-MNIST network's second 5x5 one (batch 64), each pass alone, in a
// default runtime and in one that keeps oneDNN's direct kernels: what kiln's
// own Winograd kernels (on AVX2 CPUs) win or lose per layer.
#pragma once

#include "kiln/runtime.hpp"

namespace kiln::bench {

void bench_convs();

}  // namespace kiln::bench
