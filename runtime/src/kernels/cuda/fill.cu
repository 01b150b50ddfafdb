// "full" on a GPU, and cuda::fill for the other constant-making ops. The
// value is converted on the host exactly as the CPU kernel converts it, then
// its bits are written to every element, so both devices produce identical
// tensors.
#include <cstring>
#include <type_traits>

#include "cuda_kernels.hpp"
#include "kiln/ops/registry.hpp"
#include "fill.hpp"
#include "launch.cuh"
#include "stream.hpp"
#include "../../memory/cuda/device_guard.hpp"

namespace kiln {
namespace {

template <class Word>
__global__ void fill_words(Word* dst, Word value, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = value;
}

// The element's bit pattern, widened to 64 bits.
uint64_t fill_bits(DType dtype, double value) {
  return visit_dtype(dtype, [&]<class T>() {
    T v;
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) v = from_float<T>(float(value));
    else v = static_cast<T>(value);
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof v);
    return bits;
  });
}

void full_cuda(const KernelCall& c) { cuda::fill(c.outputs[0], c.op.attr_real(c.attrs, "value")); }

}  // namespace

namespace cuda {

void fill(Tensor& out, double value) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const uint64_t bits = fill_bits(out.dtype(), value);
  CudaDeviceGuard guard(out.device().index);
  cuda::visit_word(out.element_size(), [&]<class Word>() {
    Word word;
    std::memcpy(&word, &bits, sizeof word);  // the low bytes on a little-endian host
    fill_words<Word><<<cuda::grid_size(n), cuda::kBlockSize, 0, compute_stream(out.device().index)>>>(
        out.data<Word>(), word, n);
  });
  KILN_CUDA_CHECK_LAUNCH("the fill kernel for ", describe(out));
}

}  // namespace cuda

void register_cuda_fill_kernels(OpRegistry& r) {
  for (DType t : kAllDTypes) r.set_kernel("full", DeviceType::cuda, t, full_cuda);
}

}  // namespace kiln
