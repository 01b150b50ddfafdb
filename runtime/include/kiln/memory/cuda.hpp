// The CUDA side of memory and devices. In a build without CUDA these report
// "built without CUDA" and no GPU; runtime code calls them unconditionally.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kiln/memory/allocator.hpp"
#include "kiln/memory/transfer_queue.hpp"

namespace kiln {

class DeviceTimeline;
struct DeviceInventory;

// What the training report needs to know of a GPU.
struct GpuProperties {
  std::string name;           // "NVIDIA H200"
  int64_t memory_bytes = 0;   // all of its memory
  int compute_major = 0;      // compute capability
  int compute_minor = 0;
};

bool built_with_cuda();
// GPUs visible to this process, or the reason there are none.
DeviceInventory cuda_inventory();
// The properties of GPU `index`; throws where it is not available.
GpuProperties cuda_properties(int index);
// The device allocator for GPU `index`: a CachingAllocator
// (kiln/memory/caching_allocator.hpp) on kiln's compute stream, capped by
// KILN_CUDA_MEMORY_FRACTION (kiln/memory/memory_fraction.hpp). Throws when
// CUDA is unavailable or the variable is malformed.
std::shared_ptr<Allocator> make_cuda_allocator(int index);
// Page-locked host memory (cudaHostAlloc), for buffers that are copied to a
// GPU: the copy runs at full bus speed and can overlap compute. Freed blocks
// are kept for reuse by size, since a loader asks for the same batch sizes
// step after step. Throws where CUDA is unavailable.
std::shared_ptr<Allocator> make_pinned_host_allocator();
// Host-to-device copies on a non-blocking stream of GPU `index`, with
// events, beside kiln's compute stream. Throws where CUDA is unavailable.
std::shared_ptr<TransferQueue> make_cuda_transfer_queue(int index);
// Timing events on the streams of GPU `index` (kiln/profiler/
// device_timeline.hpp). Throws where CUDA is unavailable.
std::unique_ptr<DeviceTimeline> make_cuda_timeline(int index);
// Byte copies between host and device memory (either side may be a GPU);
// synchronous with respect to the host.
void cuda_copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes);

}  // namespace kiln
