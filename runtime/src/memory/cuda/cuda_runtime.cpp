// The CUDA build's answers to kiln/memory/cuda.hpp: which GPUs exist, and
// byte copies between host and device memory.
#include <cstring>

#include "kiln/memory/cuda.hpp"
#include "kiln/runtime.hpp"

#include "cuda_error.hpp"
#include "device_guard.hpp"

namespace kiln {
namespace {

// Why cudaGetDeviceCount failed, in words a user can act on.
std::string unavailable_reason(cudaError_t err) {
  switch (err) {
    case cudaErrorInsufficientDriver:
      return str_cat("no usable CUDA driver found: none is installed, or it is older than the CUDA ",
                     CUDART_VERSION / 1000, ".", CUDART_VERSION % 1000 / 10, " runtime kiln was built with (",
                     cuda_error_text(err), ")");
    case cudaErrorNoDevice:
      return str_cat("no GPU visible to this process (check CUDA_VISIBLE_DEVICES) (", cuda_error_text(err), ")");
    default:
      return str_cat("CUDA could not be initialised (", cuda_error_text(err), ")");
  }
}

// At least one side is a GPU.
cudaMemcpyKind copy_kind(Device dst, Device src) {
  if (src.is_cpu()) return cudaMemcpyHostToDevice;
  return dst.is_cpu() ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
}

}  // namespace

bool built_with_cuda() { return true; }

DeviceInventory cuda_inventory() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // a failed probe must not surface in a later, unrelated check
    return {0, unavailable_reason(err)};
  }
  if (count == 0) return {0, "no GPU visible to this process (check CUDA_VISIBLE_DEVICES)"};
  return {count, ""};
}

GpuProperties cuda_properties(int index) {
  cudaDeviceProp props{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&props, index), "reading the properties of cuda:", index);
  return {props.name, int64_t(props.totalGlobalMem), props.major, props.minor};
}

void cuda_copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) {
  if (bytes == 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    std::memcpy(dst, src, bytes);  // needs no driver
    return;
  }
  const auto what = [&] {
    return str_cat("copying ", bytes, " bytes from ", to_string(src_device), " to ", to_string(dst_device));
  };
  // Device-to-device copies are queued on the default stream, behind every
  // kernel kiln launched on these buffers, and complete before any later one.
  if (dst_device.is_cuda() && src_device.is_cuda() && dst_device.index != src_device.index) {
    KILN_CUDA_CHECK(cudaMemcpyPeer(dst, dst_device.index, src, src_device.index, bytes), what());
    return;
  }
  // The GPU side's device must be current for the copy to run in its context.
  CudaDeviceGuard guard(dst_device.is_cuda() ? dst_device.index : src_device.index);
  KILN_CUDA_CHECK(cudaMemcpy(dst, src, bytes, copy_kind(dst_device, src_device)), what());
}

}  // namespace kiln
