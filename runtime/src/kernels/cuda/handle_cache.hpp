// cuBLASLt and cuDNN handles, one of each per GPU for the whole process,
// created on first use with their stream set to compute_stream(device).
// A handle is lent to one caller at a time: cuDNN forbids two threads using
// a handle at once, and all of kiln's GPU work is queued on one stream, so
// the wait costs nothing the GPU would not wait for anyway. The handles are
// destroyed at exit while the driver is still there, and left to the
// process's end when it is already gone.
#pragma once

#include <cublasLt.h>
#include <cudnn.h>

#include <mutex>

namespace kiln::cuda {

template <class Handle>
class HandleLease {
 public:
  HandleLease(std::unique_lock<std::mutex> lock, Handle handle) : lock_(std::move(lock)), handle_(handle) {}
  Handle get() const { return handle_; }

 private:
  std::unique_lock<std::mutex> lock_;
  Handle handle_;
};

HandleLease<cublasLtHandle_t> cublaslt_handle(int device);
HandleLease<cudnnHandle_t> cudnn_handle(int device);

}  // namespace kiln::cuda
