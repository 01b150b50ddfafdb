#include "handle_cache.hpp"

#include <memory>
#include <vector>

#include "../../memory/cuda/device_guard.hpp"
#include "cublas_error.hpp"
#include "cudnn_error.hpp"
#include "stream.hpp"

namespace kiln::cuda {
namespace {

template <class Handle>
class PerDeviceHandles {
 public:
  using Create = Handle (*)(int device);
  using Destroy = void (*)(Handle handle);
  PerDeviceHandles(Create create, Destroy destroy) : create_(create), destroy_(destroy) {}
  PerDeviceHandles(const PerDeviceHandles&) = delete;
  PerDeviceHandles& operator=(const PerDeviceHandles&) = delete;

  // Runs at exit, before the CUDA runtime's own teardown (which registered
  // itself earlier, when the first allocation initialised it). When the
  // driver is gone all the same, destroying would touch freed state.
  ~PerDeviceHandles() {
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess) {
      cudaGetLastError();
      return;
    }
    for (size_t device = 0; device < slots_.size(); ++device) {
      if (!slots_[device]->handle) continue;
      if (cudaSetDevice(int(device)) != cudaSuccess) {
        cudaGetLastError();
        continue;
      }
      destroy_(slots_[device]->handle);
    }
    if (cudaSetDevice(current) != cudaSuccess) cudaGetLastError();
  }

  HandleLease<Handle> lease(int device) {
    Slot& slot = slot_for(device);
    std::unique_lock<std::mutex> lock(slot.mutex);
    if (!slot.handle) {
      CudaDeviceGuard guard(device);
      slot.handle = create_(device);
    }
    return HandleLease<Handle>(std::move(lock), slot.handle);
  }

 private:
  struct Slot {
    std::mutex mutex;
    Handle handle{};
  };

  Slot& slot_for(int device) {
    std::lock_guard<std::mutex> lock(slots_mutex_);
    while (slots_.size() <= size_t(device)) slots_.push_back(std::make_unique<Slot>());
    return *slots_[size_t(device)];
  }

  Create create_;
  Destroy destroy_;
  std::mutex slots_mutex_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

// cuBLASLt takes its stream per call (cublasLtMatmul), not from the handle.
cublasLtHandle_t create_cublaslt(int device) {
  cublasLtHandle_t handle = nullptr;
  KILN_CUBLAS_CHECK(cublasLtCreate(&handle), "cublasLtCreate on cuda:", device);
  return handle;
}

cudnnHandle_t create_cudnn(int device) {
  cudnnHandle_t handle = nullptr;
  KILN_CUDNN_CHECK(cudnnCreate(&handle), "cudnnCreate on cuda:", device);
  const cudnnStatus_t status = cudnnSetStream(handle, compute_stream(device));
  if (status != CUDNN_STATUS_SUCCESS) {
    cudnnDestroy(handle);
    KILN_CUDNN_CHECK(status, "cudnnSetStream on cuda:", device);
  }
  return handle;
}

// Destroying fails only when the context is already torn down, and then the
// handle's resources went with it.
void destroy_cublaslt(cublasLtHandle_t handle) { (void)cublasLtDestroy(handle); }
void destroy_cudnn(cudnnHandle_t handle) { (void)cudnnDestroy(handle); }

}  // namespace

HandleLease<cublasLtHandle_t> cublaslt_handle(int device) {
  static PerDeviceHandles<cublasLtHandle_t> handles(create_cublaslt, destroy_cublaslt);
  return handles.lease(device);
}

HandleLease<cudnnHandle_t> cudnn_handle(int device) {
  static PerDeviceHandles<cudnnHandle_t> handles(create_cudnn, destroy_cudnn);
  return handles.lease(device);
}

}  // namespace kiln::cuda
