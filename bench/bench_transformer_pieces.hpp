// The element-wise and row-wise ops of the comparison suite's character
// transformer, alone, at its sizes (32 sequences of 64 tokens, width 128,
// 4 heads): what a step spends outside its matrix products.
#pragma once

#include "kiln/runtime.hpp"

namespace kiln::bench {

void bench_transformer_pieces(Runtime& rt);

}  // namespace kiln::bench
