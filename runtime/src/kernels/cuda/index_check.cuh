// Range checks for index tensors read on a GPU (embedding rows, gather
// positions, class targets). A kernel that meets an index out of range
// skips the element and records the first such position; the host then
// reads that slot back (one small copy, which waits for the kernel), so the
// op can throw the error its CPU kernel throws.
#pragma once

#include <cstdint>
#include <optional>

#include "kiln/runtime.hpp"
#include "stream.hpp"
#include "../../memory/cuda/cuda_error.hpp"
#include "../../memory/cuda/device_guard.hpp"

namespace kiln::cuda {

// What a kernel holds: the slot for the first bad position (all bits set,
// the largest unsigned value, while there is none).
struct BadIndexSlot {
  unsigned long long* first;

  __device__ void report(int64_t position) const { atomicMin(first, static_cast<unsigned long long>(position)); }
};

class IndexCheck {
 public:
  // A slot on the device of `indices` (i32 or i64), set to "none".
  IndexCheck(Runtime& rt, const Tensor& indices)
      : indices_(indices), slot_(rt.full({1}, -1.0, DType::i64, indices.device())) {}

  BadIndexSlot slot() const { return {reinterpret_cast<unsigned long long*>(slot_.data<int64_t>())}; }

  struct BadIndex {
    int64_t position, index;
  };
  // The first bad index and where it is, once the kernels queued so far
  // have run; nothing when every index was in range.
  std::optional<BadIndex> first_bad() const {
    const int64_t position = read(slot_.data<int64_t>());
    if (position < 0) return std::nullopt;
    const int64_t index = indices_.dtype() == DType::i32 ? read(indices_.data<int32_t>() + position)
                                                          : read(indices_.data<int64_t>() + position);
    return BadIndex{position, index};
  }

 private:
  template <class I>
  int64_t read(const I* device_value) const {
    const int device = indices_.device().index;
    // Stream 0 is the current device's: on another device the copy and the
    // wait would not be ordered after the kernels that filled the slot.
    CudaDeviceGuard guard(device);
    I value{};
    KILN_CUDA_CHECK(cudaMemcpyAsync(&value, device_value, sizeof value, cudaMemcpyDeviceToHost, compute_stream(device)),
                    "reading an index back from ", to_string(indices_.device()));
    KILN_CUDA_CHECK(cudaStreamSynchronize(compute_stream(device)), "waiting for an index check on ",
                    to_string(indices_.device()));
    return int64_t(value);
  }

  Tensor indices_;
  Tensor slot_;
};

}  // namespace kiln::cuda
