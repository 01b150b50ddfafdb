// Progress output on stderr: a live bar redrawn in place on a terminal,
// plain lines every few steps elsewhere (a log file, a CI job), or nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "kiln/kiln.h"

namespace kiln::train {

// What the output counts towards: shown as "epoch e/E step s/S" and used
// for the time left.
struct ProgressPlan {
  int64_t epochs = 0;           // E
  int64_t steps_per_epoch = 0;  // S
  int64_t total_steps = 0;      // of the whole run
  int64_t log_every = 0;        // steps between plain lines
};

// kiln_trainer_options.progress's value for no output.
constexpr int kQuietProgress = 3;

class Progress {
 public:
  // `option` is kiln_trainer_options.progress (0 to 3, checked by the caller).
  Progress(int option, const ProgressPlan& plan);

  // After each step; `epoch_seconds` is the time spent in the epoch's steps so far.
  void step(const kiln_step_metrics& m, double epoch_seconds);
  // After the last step of an epoch: the bar stays on its line.
  void end_epoch();
  void eval(const kiln_eval_metrics& m);

 private:
  enum class Mode { bar, lines, quiet };

  void draw_bar(const kiln_step_metrics& m, double epoch_seconds);
  void print_line(const std::string& line);
  void leave_bar_line();

  Mode mode_;
  ProgressPlan plan_;
  bool bar_on_line_ = false;  // the cursor is after a bar, not at a line start
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace kiln::train
