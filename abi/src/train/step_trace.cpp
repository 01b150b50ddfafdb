#include "train/step_trace.hpp"

#include "kiln/error.hpp"
#include "kiln/profiler/profile_report.hpp"

namespace kiln::train {

StepTrace::StepTrace(Profiler& profiler, std::string path, int64_t first, int64_t last)
    : profiler_(profiler), path_(std::move(path)), first_(first), last_(last) {
  KILN_CHECK(first_ >= 1 && last_ >= first_, Status::invalid_argument, "options->trace_first_step is ", first_,
             " and trace_last_step ", last_, "; expected 1 <= first <= last (steps count from 1, as the metrics do)");
}

StepTrace::~StepTrace() {
  if (!recording_) return;
  try {
    profiler_.end();
  } catch (...) {
    // Someone else ended it: nothing left to stop.
  }
}

void StepTrace::begin_step(int64_t step) {
  if (step != first_) return;
  KILN_CHECK(!profiler_.enabled(), Status::invalid_state, "cannot trace steps ", first_, " to ", last_, " into '",
             path_, "': the runtime is being profiled already (kiln_profiler_begin, kiln run --profile or --trace)");
  profiler_.begin();
  recording_ = true;
}

void StepTrace::end_step(int64_t step) {
  if (recording_ && step >= last_) write();
}

void StepTrace::finish() {
  if (recording_) write();
}

void StepTrace::write() {
  recording_ = false;
  profiler_.end();
  write_chrome_trace(profiler_, path_);
}

StepSpan::StepSpan(const Profiler& profiler, int64_t step) {
  if (profiler.enabled()) span_.emplace(profiler, "", str_cat("step ", step));
}

}  // namespace kiln::train
