// Splits a training step's time into phases: each charge() gives the time
// since the previous one (or the start) to one phase, so the phases add up
// to the step's time and nothing is counted twice. While the runtime's
// profiler records (a trace of chosen steps), each charge is also a span of
// the phase's name on the host's clock.
//
// On the CPU the phases are the host's time. On a GPU the host only queues
// work, so each charge also records a mark on the GPU's compute stream
// (kiln/profiler/device_timeline.hpp), and finish() waits for the last one:
// each phase then holds the GPU's time between its marks, and the time the
// host spent outside them (reaching the first mark, waking after the last)
// goes to the phase finish() is given. The step's time is still its wall
// time; the price is one synchronisation with the GPU per step.
//
//   StepClock clock(profiler, timeline);  // timeline null on the CPU
//   ... take the batch ...   clock.charge(&m.input_wait_seconds, "input wait");
//   ... forward ...          clock.charge(&m.forward_seconds, "forward");
//   m.step_seconds = clock.finish(&m.other_seconds);
#pragma once

#include <chrono>
#include <vector>

#include "kiln/profiler/device_timeline.hpp"
#include "kiln/profiler/profiler.hpp"

namespace kiln {

class StepClock {
 public:
  // `device`: the timeline of the device the step computes on, or null
  // for the host's clock; it must outlive the clock.
  StepClock(const Profiler& profiler, DeviceTimeline* device);
  ~StepClock();
  StepClock(const StepClock&) = delete;
  StepClock& operator=(const StepClock&) = delete;

  // Gives the time since the last charge to *phase, named `name` in traces.
  void charge(double* phase, const char* name);
  // Ends the step and returns its seconds, which the phases add up to. On
  // a device, the charges are settled now, and *outside receives the time
  // not covered by the device's marks.
  double finish(double* outside);

 private:
  using Clock = std::chrono::steady_clock;
  struct Charge {
    double* phase;
    double host_seconds;
    DeviceTimeline::Mark mark;
  };

  const Profiler& profiler_;
  DeviceTimeline* device_;
  Clock::time_point start_;
  Clock::time_point last_;
  DeviceTimeline::Mark start_mark_ = 0;
  std::vector<Charge> charges_;  // on a device, until finish()
};

}  // namespace kiln
