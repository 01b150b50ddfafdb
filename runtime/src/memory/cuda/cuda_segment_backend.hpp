// The caching allocator's view of one GPU: segments from cudaMalloc, and
// events recorded on streams to learn when they are done with a block.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "kiln/memory/segment_backend.hpp"

namespace kiln {

class CudaSegmentBackend final : public SegmentBackend {
 public:
  explicit CudaSegmentBackend(int index) : index_(index) {}
  ~CudaSegmentBackend() override;
  CudaSegmentBackend(const CudaSegmentBackend&) = delete;
  CudaSegmentBackend& operator=(const CudaSegmentBackend&) = delete;

  Device device() const override { return Device::cuda(index_); }
  void* reserve(size_t bytes) override;
  void release(void* segment, size_t bytes) noexcept override;
  EventId record_event(StreamId stream) noexcept override;
  bool event_completed(EventId event) noexcept override;
  void wait_event(EventId event) noexcept override;
  void destroy_event(EventId event) noexcept override;
  std::string describe_device_memory() override;

 private:
  int index_;
  // Completed events, kept for the next record: creating one costs a driver call.
  std::vector<cudaEvent_t> spare_events_;
};

}  // namespace kiln
