// The kiln_bench row for linear's fused activation.
#pragma once

#include "kiln/runtime.hpp"

namespace kiln::bench {

// linear with its activation fused against linear then the activation op,
// for MLP layer shapes, forward and forward+backward.
void bench_linear_activation(Runtime& rt);

}  // namespace kiln::bench
