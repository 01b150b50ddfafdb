// A build without the CUDA backend: no GPU, and a clear reason why.
#include "kiln/error.hpp"
#include "kiln/memory/cuda.hpp"
#include "kiln/profiler/device_timeline.hpp"
#include "kiln/runtime.hpp"

namespace kiln {

bool built_with_cuda() { return false; }

DeviceInventory cuda_inventory() { return {0, "kiln was built without CUDA (KILN_WITH_CUDA=OFF)"}; }

GpuProperties cuda_properties(int index) {
  throw_error(Status::device_mismatch, str_cat("cuda:", index, " is not available: kiln was built without CUDA"));
}

std::shared_ptr<Allocator> make_cuda_allocator(int index) {
  throw_error(Status::device_mismatch, str_cat("cuda:", index, " is not available: kiln was built without CUDA"));
}

std::shared_ptr<Allocator> make_pinned_host_allocator() {
  throw_error(Status::unsupported, "page-locked host memory needs CUDA: kiln was built without it");
}

std::shared_ptr<TransferQueue> make_cuda_transfer_queue(int index) {
  throw_error(Status::device_mismatch, str_cat("cuda:", index, " is not available: kiln was built without CUDA"));
}

std::unique_ptr<DeviceTimeline> make_cuda_timeline(int index) {
  throw_error(Status::device_mismatch, str_cat("cuda:", index, " is not available: kiln was built without CUDA"));
}

void cuda_copy(void*, Device dst, const void*, Device src, size_t) {
  throw_error(Status::device_mismatch, str_cat("cannot copy from ", to_string(src), " to ", to_string(dst),
                                               ": kiln was built without CUDA"));
}

}  // namespace kiln
