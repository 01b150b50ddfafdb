// A device that runs on the host's clock, for testing what is measured with
// device timelines on machines without a GPU. The test says how much work
// the device will run before the next mark (queue); a mark is reached that
// long after the later of its recording and the previous mark's reach, as
// a GPU's stream reaches an event; wait() sleeps until then.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "kiln/profiler/device_timeline.hpp"

namespace kiln::test {

struct FakeDevice {
  using Clock = std::chrono::steady_clock;

  double now() const { return std::chrono::duration<double>(Clock::now() - origin).count(); }

  Clock::time_point origin = Clock::now();
  double queued = 0;        // seconds of work before the next mark
  double reach = 0;         // when the device reaches the last mark
  std::vector<double> marks;  // reach time of mark i + 1
  std::vector<bool> released;
  bool unreadable = false;  // seconds_between fails, as for a lost event
  int timelines = 0;        // made so far
};

class FakeTimeline final : public DeviceTimeline {
 public:
  FakeTimeline(Device device, FakeDevice& fake) : device_(device), fake_(fake) { ++fake_.timelines; }

  Device device() const override { return device_; }
  StreamId compute_stream() const override { return 0; }

  Mark mark(StreamId) noexcept override {
    fake_.reach = std::max(fake_.now(), fake_.reach) + fake_.queued;
    fake_.queued = 0;
    fake_.marks.push_back(fake_.reach);
    fake_.released.push_back(false);
    return fake_.marks.size();
  }

  void wait(Mark mark) noexcept override {
    if (!mark) return;
    const double wait = fake_.marks[mark - 1] - fake_.now();
    if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }

  std::optional<double> seconds_between(Mark from, Mark to) noexcept override {
    if (!from || !to || fake_.unreadable) return std::nullopt;
    return fake_.marks[to - 1] - fake_.marks[from - 1];
  }

  void release(Mark mark) noexcept override {
    if (mark) fake_.released[mark - 1] = true;
  }

 private:
  Device device_;
  FakeDevice& fake_;
};

// The marks made and not released.
inline long unreleased(const FakeDevice& fake) { return std::count(fake.released.begin(), fake.released.end(), false); }

inline bool all_released(const FakeDevice& fake) { return unreleased(fake) == 0; }

}  // namespace kiln::test
