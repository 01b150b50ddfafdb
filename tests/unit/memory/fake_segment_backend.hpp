// A device for the caching allocator's tests: segments are host memory
// within a byte budget, events complete when the test says so, and every
// call is counted. The test keeps the FakeDevice; the allocator owns the
// backend that talks to it, so the counts outlive the allocator.
#pragma once

#include <cstdlib>
#include <map>
#include <memory>
#include <vector>

#include "kiln/error.hpp"
#include "kiln/memory/segment_backend.hpp"

namespace kiln::test {

struct FakeDevice {
  explicit FakeDevice(size_t budget_bytes) : budget(budget_bytes) {}

  size_t budget;
  size_t used = 0;
  bool broken = false;  // reserve fails with an error other than out of memory
  int reserves = 0;          // segments handed out
  int refused_reserves = 0;  // requests over the budget
  int releases = 0;
  int bad_releases = 0;  // a pointer or size that was not a live segment
  std::map<void*, size_t> live_segments;
  std::vector<StreamId> event_streams;  // the stream of event i + 1
  std::vector<bool> event_done;
  int live_events = 0;
  int waits = 0;

  EventId last_event() const { return event_streams.size(); }
  void complete(EventId event) { event_done.at(event - 1) = true; }
};

class FakeSegmentBackend final : public SegmentBackend {
 public:
  explicit FakeSegmentBackend(std::shared_ptr<FakeDevice> device) : device_(std::move(device)) {}

  Device device() const override { return Device::cuda(0); }

  void* reserve(size_t bytes) override {
    if (device_->broken) throw Error(Status::internal, "the fake device is broken");
    if (device_->used + bytes > device_->budget) {
      ++device_->refused_reserves;
      return nullptr;
    }
    void* segment = std::malloc(bytes);
    if (!segment) return nullptr;
    device_->used += bytes;
    ++device_->reserves;
    device_->live_segments.emplace(segment, bytes);
    return segment;
  }

  void release(void* segment, size_t bytes) noexcept override {
    const auto it = device_->live_segments.find(segment);
    if (it == device_->live_segments.end() || it->second != bytes) {
      ++device_->bad_releases;
      return;
    }
    device_->live_segments.erase(it);
    device_->used -= bytes;
    ++device_->releases;
    std::free(segment);
  }

  EventId record_event(StreamId stream) noexcept override {
    device_->event_streams.push_back(stream);
    device_->event_done.push_back(false);
    ++device_->live_events;
    return device_->event_streams.size();
  }

  bool event_completed(EventId event) noexcept override { return device_->event_done.at(event - 1); }

  void wait_event(EventId event) noexcept override {
    ++device_->waits;
    device_->complete(event);
  }

  void destroy_event(EventId) noexcept override { --device_->live_events; }

  std::string describe_device_memory() override {
    return "; the fake device has " + std::to_string(device_->budget - device_->used) + " bytes free";
  }

 private:
  std::shared_ptr<FakeDevice> device_;
};

}  // namespace kiln::test
