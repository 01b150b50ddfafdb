// Shared by kiln's element-wise CUDA kernels: grid sizing for grid-stride
// loops, the launch check, and dispatch on element width for kernels that
// only move bits (fills, copies), so one instantiation serves several dtypes.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../../memory/cuda/cuda_error.hpp"

// Launch failures (a bad configuration, no kernel image for this GPU) are
// reported by the next runtime call; take them now so they name the kernel.
#define KILN_CUDA_CHECK_LAUNCH(...) KILN_CUDA_CHECK(cudaGetLastError(), "launching ", __VA_ARGS__)

namespace kiln::cuda {

inline constexpr int kBlockSize = 256;

// Enough blocks to cover n elements, capped: kernels loop over the rest.
inline unsigned grid_size(int64_t n) {
  constexpr int64_t kMaxBlocks = 1 << 16;
  return unsigned(std::clamp<int64_t>((n + kBlockSize - 1) / kBlockSize, 1, kMaxBlocks));
}

// Calls fn.template operator()<Word>() with the unsigned integer type as
// wide as one element.
template <class Fn>
void visit_word(size_t element_size, Fn&& fn) {
  switch (element_size) {
    case 1: fn.template operator()<uint8_t>(); break;
    case 2: fn.template operator()<uint16_t>(); break;
    case 4: fn.template operator()<uint32_t>(); break;
    default: fn.template operator()<uint64_t>(); break;
  }
}

}  // namespace kiln::cuda
