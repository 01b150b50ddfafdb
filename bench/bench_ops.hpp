// The benchmark rows of kiln_bench, each printing its own table lines.
#pragma once

#include "kiln/runtime.hpp"

namespace kiln::bench {

void bench_matmul(Runtime& rt);    // kiln matmul vs oneDNN matmul direct, square f32
void bench_conv2d(Runtime& rt);    // the conv layers of a small CNN, forward and forward+backward
void bench_mlp_step(Runtime& rt);  // one training step of a 784-256-10 MLP, batch 64
void bench_dispatch(Runtime& rt);  // the fixed cost of one tiny op call

}  // namespace kiln::bench
