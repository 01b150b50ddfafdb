// Makes one GPU current for a scope and restores the caller's current device
// afterwards: kiln runs inside host processes that use CUDA themselves and
// must not leave their device selection changed.
#pragma once

#include "cuda_error.hpp"

namespace kiln {

class CudaDeviceGuard {
 public:
  explicit CudaDeviceGuard(int index) : target_(index) {
    KILN_CUDA_CHECK(cudaGetDevice(&previous_), "cudaGetDevice (before switching to cuda:", index, ")");
    if (previous_ != target_) KILN_CUDA_CHECK(cudaSetDevice(target_), "cudaSetDevice(", target_, ")");
  }
  ~CudaDeviceGuard() {
    // A destructor cannot throw; restoring only fails when the driver is
    // already being torn down, and then there is no device to restore.
    if (previous_ != target_ && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
  }
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

 private:
  int target_;
  int previous_ = 0;
};

// Runs `body` with the GPU current, swallowing failures: for calls from
// destructors and deleters, which cannot throw. A device guard or a CUDA
// call fails there only when the context is already gone (process
// teardown), and then the work and the memory are gone with it.
template <class F>
void on_device_without_throwing(int index, F&& body) noexcept {
  try {
    CudaDeviceGuard guard(index);
    body();
  } catch (...) {
  }
  cudaGetLastError();
}

}  // namespace kiln
