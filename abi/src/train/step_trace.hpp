// A trace of chosen steps (kiln_trainer_options.trace_path): the runtime's
// profiler records from the start of step `first` to the end of step
// `last`, and the trace is written then (or when training ends first).
// Each step is a span ("step 12") over its phases' spans ("input wait",
// "forward", "backward", "reduce gradients", "optimizer", "other") and the
// op calls, beside the loader workers' tracks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kiln/profiler/profiler.hpp"

namespace kiln::train {

class StepTrace {
 public:
  // Checks the step range (first >= 1, last >= first).
  StepTrace(Profiler& profiler, std::string path, int64_t first, int64_t last);
  // A trace still recording is abandoned: profiling ends, nothing is written.
  ~StepTrace();
  StepTrace(const StepTrace&) = delete;
  StepTrace& operator=(const StepTrace&) = delete;

  // Before step `step` (1-based, as the metrics count): recording starts
  // at the first traced step, which fails while the runtime is being
  // profiled already (the two would mix).
  void begin_step(int64_t step);
  // After step `step`: the last traced step ends the recording and writes the trace.
  void end_step(int64_t step);
  // Training ended: a trace still recording is written with the steps it has.
  void finish();

 private:
  void write();

  Profiler& profiler_;
  const std::string path_;
  const int64_t first_;
  const int64_t last_;
  bool recording_ = false;
};

// The span of one step, while the profiler records.
class StepSpan {
 public:
  StepSpan(const Profiler& profiler, int64_t step);

 private:
  std::optional<ProfiledSpan> span_;
};

}  // namespace kiln::train
