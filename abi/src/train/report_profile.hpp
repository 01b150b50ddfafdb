// The per-op profile behind the report's "ops" advice: one step (the
// third: after the first, which builds kernels) is profiled when the
// report will be printed and the runtime is not being profiled already.
// It replaces the runtime's last finished profile, as any profile does.
#pragma once

struct kiln_trainer;

namespace kiln::train {

// Profiles the step it encloses when it is the one to profile; the summary
// goes to the trainer's report when it ends.
class ReportProfileScope {
 public:
  explicit ReportProfileScope(kiln_trainer& t);
  ~ReportProfileScope();
  ReportProfileScope(const ReportProfileScope&) = delete;
  ReportProfileScope& operator=(const ReportProfileScope&) = delete;

 private:
  kiln_trainer& trainer_;
  bool profiling_ = false;
};

}  // namespace kiln::train
