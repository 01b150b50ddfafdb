#include "launch.cuh"
#include "matmul_bias_rows.hpp"
#include "stream.hpp"
#include "../../memory/cuda/device_guard.hpp"

namespace kiln::cuda {
namespace {

template <class Word>
__global__ void repeat_row(Word* out, const Word* row, int64_t cols, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) out[i] = row[i % cols];
}

}  // namespace

void fill_rows_with_bias(int device, void* out, const void* bias, size_t element_size, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  if (n == 0) return;
  CudaDeviceGuard guard(device);
  const cudaStream_t stream = compute_stream(device);
  if (!bias) {
    KILN_CUDA_CHECK(cudaMemsetAsync(out, 0, size_t(n) * element_size, stream), "zeroing a [", rows, ", ", cols,
                    "] product on cuda:", device);
    return;
  }
  visit_word(element_size, [&]<class Word>() {
    repeat_row<Word><<<grid_size(n), kBlockSize, 0, stream>>>(static_cast<Word*>(out), static_cast<const Word*>(bias),
                                                                cols, n);
  });
  KILN_CUDA_CHECK_LAUNCH("the bias fill of a [", rows, ", ", cols, "] product on cuda:", device);
}

}  // namespace kiln::cuda
