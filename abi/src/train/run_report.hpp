// The trainer's side of the training report (kiln/report): it adds up the
// steps as they are taken and, when asked, gathers what it knows of the run
// (device, loader, precision, memory) and writes the report.
#pragma once

#include <string>

#include "kiln/kiln_training.h"
#include "kiln/report/training_report.hpp"

struct kiln_trainer;

namespace kiln::train {

class RunReport {
 public:
  // Adds a step; the trainer's first step is left out (see RunTotals).
  void add(const kiln_step_metrics& m);
  // A per-op profile of one step, for the "ops" advice.
  void set_op_profile(report::OpCallSummary profile) { op_profile_ = std::move(profile); }
  // The report of the steps so far.
  std::string text(const kiln_trainer& t) const;

 private:
  int64_t seen_ = 0;
  report::RunTotals totals_;
  report::OpCallSummary op_profile_;
};

// The peak FLOP/s of the model's device at the run's precision (0 when
// unknown); on the CPU the first call measures it.
double run_peak_flops(const kiln_trainer& t);

}  // namespace kiln::train
