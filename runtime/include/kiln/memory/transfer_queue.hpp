// Host-to-device copies on a stream of their own, so that the next batch
// travels to the GPU while the current step computes. Kernels run on the
// device's compute stream; a copy queued here runs beside them, and the
// compute stream is told to wait for it (on the device, the host never
// blocks) only just before the step that reads its data.
//
//   queue.copy_to_device(dst, pinned_src, bytes);  // returns at once
//   Ticket t = queue.record_copies();              // done when the copies are
//   ...
//   Probe p = queue.compute_waits_for(t);          // later kernels see the data
//   queue.probe_seconds(p);                        // how long compute waited
//
// The CUDA queue (make_cuda_transfer_queue in kiln/memory/cuda.hpp) uses a
// non-blocking stream, so it does not serialise with the legacy default
// stream kiln's kernels run on, and events. The data pipeline's logic
// (kiln/data/device_stager.hpp) talks to this interface only, so tests drive
// it with a fake queue on any machine.
#pragma once

#include <cstddef>
#include <optional>

#include "kiln/device.hpp"
#include "kiln/memory/segment_backend.hpp"

namespace kiln {

class TransferQueue {
 public:
  // Completes once the copies queued before it was recorded have run.
  using Ticket = uintptr_t;
  // Measures how long the compute stream waited for a ticket; 0: none taken.
  using Probe = uintptr_t;

  virtual ~TransferQueue() = default;
  virtual Device device() const = 0;
  // The streams as the caching allocator knows them (CachingAllocator::allocate,
  // record_stream).
  virtual StreamId copy_stream() const = 0;
  virtual StreamId compute_stream() const = 0;

  // Queues a copy of `bytes` from host memory (page-locked, or the copy is
  // not asynchronous) to device memory and returns. Both must stay
  // untouched until a ticket recorded after it has completed.
  virtual void copy_to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual Ticket record_copies() = 0;
  // Work queued on the compute stream from now on starts only after the
  // ticket's copies. Returns a probe of the wait, or 0 when the queue
  // cannot time it.
  virtual Probe compute_waits_for(Ticket ticket) = 0;

  virtual bool completed(Ticket ticket) noexcept = 0;
  // Blocks the calling thread until the ticket has completed.
  virtual void wait(Ticket ticket) noexcept = 0;
  virtual void release(Ticket ticket) noexcept = 0;
  // Seconds the compute stream spent waiting, once the work around the
  // wait has run; nothing before.
  virtual std::optional<double> probe_seconds(Probe probe) noexcept = 0;
  virtual void release_probe(Probe probe) noexcept = 0;
};

}  // namespace kiln
