#include "conv_bias.hpp"
#include "element.cuh"
#include "launch.cuh"
#include "stream.hpp"
#include "../../memory/cuda/device_guard.hpp"

namespace kiln::cuda {
namespace {

template <class T>
__global__ void add_bias_per_channel(T* y, const T* bias, int64_t channels, int64_t inner, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    y[i] = from_math<T>(to_math(y[i]) + to_math(bias[i / inner % channels]));
}

template <class T>
void launch(Tensor& y, const Tensor& bias) {
  const int64_t n = y.numel(), channels = y.dim(1), inner = n / (y.dim(0) * channels);
  const int device = y.device().index;
  CudaDeviceGuard guard(device);
  add_bias_per_channel<T><<<grid_size(n), kBlockSize, 0, compute_stream(device)>>>(y.data<T>(), bias.data<T>(),
                                                                                   channels, inner, n);
  KILN_CUDA_CHECK_LAUNCH("the per-channel bias kernel for ", describe(y));
}

}  // namespace

void add_channel_bias(Tensor& y, const Tensor& bias) {
  if (y.numel() == 0) return;
  switch (y.dtype()) {
    case DType::f64: return launch<double>(y, bias);
    case DType::f16: return launch<Half>(y, bias);
    case DType::bf16: return launch<BFloat16>(y, bias);
    default: return launch<float>(y, bias);
  }
}

}  // namespace kiln::cuda
