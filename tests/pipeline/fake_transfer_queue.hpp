// A transfer queue for tests without a GPU: "device" memory is host memory
// (the caching allocator's fake backend), copies are queued and run when the
// test says (or at once, in auto mode), tickets complete when the copies
// before them have run, and every call is counted. Thread-safe, for loaders
// whose workers stage batches.
#pragma once

#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "kiln/memory/transfer_queue.hpp"

namespace kiln::test {

class FakeTransferQueue final : public TransferQueue {
 public:
  static constexpr StreamId kCopyStream = 11;
  static constexpr double kProbeSeconds = 0.25;  // every measured wait

  explicit FakeTransferQueue(bool run_at_once = false) : run_at_once_(run_at_once) {}

  Device device() const override { return Device::cuda(0); }
  StreamId copy_stream() const override { return kCopyStream; }
  StreamId compute_stream() const override { return 0; }

  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    std::lock_guard lock(mutex_);
    queued_.push_back({dst, src, bytes});
    if (run_at_once_) run_locked(queued_.size());
  }
  Ticket record_copies() override {
    std::lock_guard lock(mutex_);
    tickets_.emplace(++last_id_, queued_.size());
    return last_id_;
  }
  Probe compute_waits_for(Ticket ticket) override {
    std::lock_guard lock(mutex_);
    waited_for_.push_back(ticket);
    probes_.emplace(++last_id_, false);
    return last_id_;
  }
  bool completed(Ticket ticket) noexcept override {
    std::lock_guard lock(mutex_);
    return tickets_.at(ticket) <= copies_run_;
  }
  void wait(Ticket ticket) noexcept override {
    std::lock_guard lock(mutex_);
    ++host_waits_;
    run_locked(tickets_.at(ticket));
  }
  void release(Ticket ticket) noexcept override {
    std::lock_guard lock(mutex_);
    tickets_.erase(ticket);
  }
  std::optional<double> probe_seconds(Probe probe) noexcept override {
    std::lock_guard lock(mutex_);
    if (!probes_.at(probe)) return std::nullopt;
    return kProbeSeconds;
  }
  void release_probe(Probe probe) noexcept override {
    std::lock_guard lock(mutex_);
    probes_.erase(probe);
  }

  // The device runs every copy queued so far.
  void run_copies() {
    std::lock_guard lock(mutex_);
    run_locked(queued_.size());
  }
  // The compute stream has run everything queued on it so far: the waits
  // taken until now can be measured.
  void finish_compute() {
    std::lock_guard lock(mutex_);
    for (auto& [id, done] : probes_) done = true;
  }

  size_t copies_run() const {
    std::lock_guard lock(mutex_);
    return copies_run_;
  }
  std::vector<Ticket> waited_for() const {
    std::lock_guard lock(mutex_);
    return waited_for_;
  }
  int host_waits() const {
    std::lock_guard lock(mutex_);
    return host_waits_;
  }
  size_t live_tickets() const {
    std::lock_guard lock(mutex_);
    return tickets_.size();
  }
  size_t live_probes() const {
    std::lock_guard lock(mutex_);
    return probes_.size();
  }

 private:
  struct Copy {
    void* dst;
    const void* src;
    size_t bytes;
  };

  void run_locked(size_t through) {
    for (; copies_run_ < through; ++copies_run_) {
      const Copy& c = queued_[copies_run_];
      std::memcpy(c.dst, c.src, c.bytes);
    }
  }

  const bool run_at_once_;
  mutable std::mutex mutex_;
  std::vector<Copy> queued_;
  size_t copies_run_ = 0;
  uintptr_t last_id_ = 0;
  std::map<Ticket, size_t> tickets_;  // live ticket -> copies it covers
  std::map<Probe, bool> probes_;      // live probe -> measurable
  std::vector<Ticket> waited_for_;
  int host_waits_ = 0;
};

}  // namespace kiln::test
