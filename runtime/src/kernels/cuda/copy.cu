// "copy" on a GPU: any layout in, contiguous out. Dense inputs are one
// device-to-device memcpy; strided views are gathered element by element.
#include "cuda_kernels.hpp"
#include "kiln/ops/registry.hpp"
#include "launch.cuh"
#include "../../memory/cuda/device_guard.hpp"

namespace kiln {
namespace {

// A view's layout, passed by value as a kernel argument.
struct StridedLayout {
  int rank;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims];  // in elements
};

StridedLayout layout_of(const Tensor& t) {
  StridedLayout l{};
  l.rank = t.rank();
  for (int d = 0; d < l.rank; ++d) {
    l.sizes[d] = t.shape()[d];
    l.strides[d] = t.strides()[d];
  }
  return l;
}

// dst[i] = the i-th element of the view in row-major order. A copy moves
// bits, so Word is only as wide as an element.
template <class Word>
__global__ void gather_strided(Word* dst, const Word* src, StridedLayout layout, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t rest = i, offset = 0;
    for (int d = layout.rank - 1; d >= 0; --d) {
      offset += rest % layout.sizes[d] * layout.strides[d];
      rest /= layout.sizes[d];
    }
    dst[i] = src[offset];
  }
}

void copy_cuda(const KernelCall& c) {
  const Tensor& in = c.inputs[0];
  Tensor& out = c.outputs[0];
  const int64_t n = in.numel();
  if (n == 0) return;
  CudaDeviceGuard guard(out.device().index);
  if (in.is_contiguous()) {
    KILN_CUDA_CHECK(cudaMemcpy(out.raw_data(), in.raw_data(), in.nbytes(), cudaMemcpyDeviceToDevice),
                    "copying ", describe(in), " within ", to_string(in.device()));
    return;
  }
  const StridedLayout layout = layout_of(in);
  cuda::visit_word(in.element_size(), [&]<class Word>() {
    gather_strided<Word><<<cuda::grid_size(n), cuda::kBlockSize>>>(out.data<Word>(), in.data<Word>(), layout, n);
  });
  KILN_CUDA_CHECK_LAUNCH("the strided copy kernel for ", describe(in));
}

}  // namespace

void register_cuda_copy_kernels(OpRegistry& r) {
  for (DType t : kAllDTypes) r.set_kernel("copy", DeviceType::cuda, t, copy_cuda);
}

}  // namespace kiln
