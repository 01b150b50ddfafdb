#include "train/report_profile.hpp"

#include "handles.hpp"
#include "train/trainer.hpp"

namespace kiln::train {
namespace {

constexpr int64_t kProfiledStep = 2;  // steps taken before the profiled one

Profiler& profiler_of(kiln_trainer& t) { return t.config.runtime.get()->runtime.profiler(); }

}  // namespace

ReportProfileScope::ReportProfileScope(kiln_trainer& t) : trainer_(t) {
  if (!t.config.print_report || t.rank != 0 || t.state.step != kProfiledStep || profiler_of(t).enabled()) return;
  profiler_of(t).begin();
  profiling_ = true;
}

ReportProfileScope::~ReportProfileScope() {
  if (!profiling_) return;
  Profiler& profiler = profiler_of(trainer_);
  profiler.end();
  // Without memory for the summary the report goes without the advice, and
  // the step does not fail.
  try {
    trainer_.report.set_op_profile(report::summarise_op_calls(profiler.events()));
  } catch (...) {
  }
}

}  // namespace kiln::train
