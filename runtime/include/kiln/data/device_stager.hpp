// Moves the loader's batches to a GPU without stalling compute. A worker
// thread that has assembled a batch in page-locked memory stages it: device
// memory comes from the caching allocator on the copy stream and the copies
// are queued there, so the batch is on its way while earlier steps compute.
// Delivery, on the training thread, makes the compute stream wait for those
// copies (the host does not block) and tells the allocator that the compute
// stream uses the memory, so the copy stream reuses it only after that work.
//
// The page-locked source of a copy is kept until the copy has run; the
// stager holds delivered batches' sources and drops them as their copies
// complete, and waits for those still running when it goes.
#pragma once

#include <deque>
#include <memory>
#include <mutex>

#include "kiln/data/named_tensors.hpp"
#include "kiln/memory/caching_allocator.hpp"
#include "kiln/memory/transfer_queue.hpp"

namespace kiln::data {

// A batch's copy in flight: its host source and the ticket that says when
// the copy has run. Waits for the copy when it goes before completion.
class InFlightCopy {
 public:
  InFlightCopy(std::shared_ptr<TransferQueue> queue, NamedTensors source, TransferQueue::Ticket ticket)
      : queue_(std::move(queue)), source_(std::move(source)), ticket_(ticket) {}
  ~InFlightCopy();
  InFlightCopy(const InFlightCopy&) = delete;
  InFlightCopy& operator=(const InFlightCopy&) = delete;

  TransferQueue::Ticket ticket() const { return ticket_; }
  // The compute stream's wait for this copy, once delivered.
  void set_probe(TransferQueue::Probe probe) { probe_ = probe; }
  // True once the copy has run and the wait (when timed) was measured;
  // adds the measured wait to *seconds.
  bool settle(double* seconds) noexcept;

 private:
  std::shared_ptr<TransferQueue> queue_;
  NamedTensors source_;
  TransferQueue::Ticket ticket_;
  TransferQueue::Probe probe_ = 0;
};

// A batch as a worker hands it over: its fields where training will read
// them, and the copy that brings them there (null for a CPU batch).
struct StagedBatch {
  NamedTensors fields;
  std::shared_ptr<InFlightCopy> copy;
};

class DeviceStager {
 public:
  DeviceStager(std::shared_ptr<TransferQueue> queue, std::shared_ptr<CachingAllocator> device_memory);
  DeviceStager(const DeviceStager&) = delete;
  DeviceStager& operator=(const DeviceStager&) = delete;

  Device device() const { return queue_->device(); }
  StreamId copy_stream() const { return queue_->copy_stream(); }
  // Any thread: starts copying `host_batch` and returns at once.
  StagedBatch stage(NamedTensors host_batch) const;
  // The training thread: the batch's fields, safe to use on the compute stream.
  NamedTensors deliver(StagedBatch batch);
  // Seconds the compute stream waited for input, over the delivered
  // batches whose waits have been measured so far.
  double device_wait_seconds();

 private:
  void settle_locked();

  std::shared_ptr<TransferQueue> queue_;
  std::shared_ptr<CachingAllocator> device_memory_;
  std::mutex mutex_;
  std::deque<std::shared_ptr<InFlightCopy>> delivered_;  // in delivery order, until settled
  double device_wait_seconds_ = 0;
};

}  // namespace kiln::data
