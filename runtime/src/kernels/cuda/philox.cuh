// Random draws on a GPU from the runtime's Philox stream, word for word the
// CPU's: word j of a reserved range is word j % 4 of block (offset + j / 4).
// One thread evaluates one block and uses its four words.
#pragma once

#include <cstdint>

#include "kiln/util/philox.hpp"
#include "launch.cuh"
#include "stream.hpp"
#include "../../memory/cuda/device_guard.hpp"

namespace kiln::cuda {

// Calls f(b, words) for every block b < blocks of `range`, words holding its
// four words.
template <class F>
__global__ void for_each_philox_block(GeneratorState range, int64_t blocks, F f) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += step) {
    uint32_t words[4];
    Philox::block(range.seed, 0, range.offset + uint64_t(b), words);
    f(b, words);
  }
}

template <class F>
void run_philox_blocks(const char* what, int device, const GeneratorState& range, int64_t blocks, const F& f) {
  if (blocks == 0) return;
  CudaDeviceGuard guard(device);
  for_each_philox_block<<<grid_size(blocks), kBlockSize, 0, compute_stream(device)>>>(range, blocks, f);
  KILN_CUDA_CHECK_LAUNCH(what);
}

}  // namespace kiln::cuda
