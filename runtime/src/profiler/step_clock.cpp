#include "kiln/profiler/step_clock.hpp"

#include <algorithm>
#include <optional>

namespace kiln {

StepClock::StepClock(const Profiler& profiler, DeviceTimeline* device)
    : profiler_(profiler), device_(device), start_(Clock::now()), last_(start_) {
  if (device_) start_mark_ = device_->mark(device_->compute_stream());
}

StepClock::~StepClock() {
  if (!device_) return;
  device_->release(start_mark_);
  for (const Charge& c : charges_) device_->release(c.mark);
}

void StepClock::charge(double* phase, const char* name) {
  const Clock::time_point now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - last_).count();
  if (profiler_.enabled()) record_span(profiler_, "", name, last_, now);
  last_ = now;
  if (!device_) {
    *phase += seconds;
    return;
  }
  charges_.push_back({phase, seconds, 0});
  charges_.back().mark = device_->mark(device_->compute_stream());
}

double StepClock::finish(double* outside) {
  if (!device_) return std::chrono::duration<double>(last_ - start_).count();
  const DeviceTimeline::Mark last_mark = charges_.empty() ? start_mark_ : charges_.back().mark;
  device_->wait(last_mark);
  const double wall = std::chrono::duration<double>(Clock::now() - start_).count();
  // The device's seconds per charge; the host's for all when one cannot be read.
  std::vector<double> seconds;
  DeviceTimeline::Mark from = start_mark_;
  for (const Charge& c : charges_) {
    const std::optional<double> s = device_->seconds_between(from, c.mark);
    if (!s) break;
    seconds.push_back(*s);
    from = c.mark;
  }
  const bool timed = seconds.size() == charges_.size();
  double covered = 0;
  for (size_t i = 0; i < charges_.size(); ++i) {
    const double s = timed ? seconds[i] : charges_[i].host_seconds;
    *charges_[i].phase += s;
    covered += s;
  }
  const double rest = std::max(0.0, wall - covered);
  *outside += rest;
  return covered + rest;
}

}  // namespace kiln
