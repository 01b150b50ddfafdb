// Splits a step's wall time into phases: each charge() gives the time since
// the previous one (or the start) to one phase, so the phases add up to the
// step's time exactly and nothing is counted twice. While the runtime's
// profiler records (a trace of chosen steps), each charge is also a span of
// the phase's name. Host clocks: on a GPU a phase holds the time of the
// work it waited for, not of the work it queued.
#pragma once

#include <chrono>

#include "kiln/profiler/profiler.hpp"

namespace kiln::train {

class StepClock {
 public:
  explicit StepClock(const Profiler& profiler) : profiler_(profiler), start_(Clock::now()), mark_(start_) {}

  // Adds the time since the last charge to *phase, named `name` in traces.
  void charge(double* phase, const char* name) {
    const Clock::time_point now = Clock::now();
    *phase += std::chrono::duration<double>(now - mark_).count();
    if (profiler_.enabled()) record_span(profiler_, "", name, mark_, now);
    mark_ = now;
  }

  // From the start to the last charge.
  double charged_seconds() const { return std::chrono::duration<double>(mark_ - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  const Profiler& profiler_;
  Clock::time_point start_;
  Clock::time_point mark_;
};

}  // namespace kiln::train
