// What a caching allocator asks of a device: whole segments of memory, and
// events that tell when a stream has finished with a block. The CUDA backend
// maps these onto cudaMalloc/cudaFree and cudaEventRecord/cudaEventQuery;
// the allocator's own logic knows nothing of CUDA, so it runs (and is
// tested) on any machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kiln/device.hpp"

namespace kiln {

// A device stream, opaque to the allocator: a cudaStream_t's value on CUDA,
// where 0 is the legacy default stream.
using StreamId = uintptr_t;
// A recorded event, opaque to the allocator; 0 means "nothing to wait for".
using EventId = uintptr_t;

// The allocator calls a backend under its own lock, one call at a time, so
// a backend needs no locking of its own.
class SegmentBackend {
 public:
  virtual ~SegmentBackend() = default;
  virtual Device device() const = 0;
  // A segment of exactly `bytes` bytes, or nullptr when the device has no
  // memory left for it. Any other failure throws Error.
  virtual void* reserve(size_t bytes) = 0;
  // Gives a segment back. Cannot fail: when the device is already gone
  // (process teardown), its memory went with it.
  virtual void release(void* segment, size_t bytes) noexcept = 0;
  // An event that completes once the work queued on `stream` so far has run.
  // A backend that cannot record one waits for the stream itself and
  // returns 0; a destructor calls this, so it cannot throw.
  virtual EventId record_event(StreamId stream) noexcept = 0;
  // True once the event has completed; an event whose state cannot be read
  // any more counts as completed (no work can still be running).
  virtual bool event_completed(EventId event) noexcept = 0;
  // Blocks until the event has completed.
  virtual void wait_event(EventId event) noexcept = 0;
  // The allocator is done with a completed event.
  virtual void destroy_event(EventId event) noexcept = 0;
  // What the device reports about its own memory, appended to an
  // out-of-memory message ("; the GPU has 1.2 GiB free of 80.0 GiB"), or "".
  virtual std::string describe_device_memory() = 0;
};

}  // namespace kiln
