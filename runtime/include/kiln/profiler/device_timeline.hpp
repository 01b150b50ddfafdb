// Time as a device sees it. A mark is recorded on one of the device's
// streams and is reached when the work queued there before it has run; the
// seconds between two reached marks are the device's time for the work
// between them. A training step's phases and the device tracks of traces
// are measured this way, so that on a GPU they hold the time the GPU
// spent, not the time the host took to queue the work.
//
//   std::unique_ptr<DeviceTimeline> gpu = make_device_timeline(Device::cuda(0));
//   const DeviceTimeline::Mark a = gpu->mark(gpu->compute_stream());
//   ... queue kernels ...
//   const DeviceTimeline::Mark b = gpu->mark(gpu->compute_stream());
//   gpu->wait(b);
//   std::optional<double> seconds = gpu->seconds_between(a, b);
//   gpu->release(a);
//   gpu->release(b);
//
// The CUDA timeline records timing events (cudaEventRecord). Timing is
// best effort: a mark that cannot be recorded is 0 and measures nothing,
// and no call here throws once the timeline exists. A CPU has no timeline:
// its work runs on the host's clock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "kiln/device.hpp"
#include "kiln/memory/segment_backend.hpp"

namespace kiln {

class DeviceTimeline {
 public:
  // 0: no mark.
  using Mark = uintptr_t;

  virtual ~DeviceTimeline() = default;
  virtual Device device() const = 0;
  // The stream kiln's kernels run on (the caching allocator's StreamId).
  virtual StreamId compute_stream() const = 0;

  // Records a mark on `stream`, a stream of this device; 0 when it could not.
  virtual Mark mark(StreamId stream) noexcept = 0;
  // Blocks the calling thread until `mark` has been reached (at once for 0).
  virtual void wait(Mark mark) noexcept = 0;
  // The device's seconds from reaching `from` to reaching `to`, both
  // reached; nullopt when either is 0 or cannot be read.
  virtual std::optional<double> seconds_between(Mark from, Mark to) noexcept = 0;
  // Frees a mark (nothing for 0).
  virtual void release(Mark mark) noexcept = 0;
};

// The timeline of `device`: null for the CPU, the CUDA timeline for a GPU.
// Throws where the device is not available.
std::unique_ptr<DeviceTimeline> make_device_timeline(Device device);

}  // namespace kiln
