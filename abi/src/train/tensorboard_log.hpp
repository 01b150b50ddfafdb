// The trainer's scalars in a TensorBoard event file: one event per step
// and per evaluation, flushed as written.
#pragma once

#include <memory>

#include "kiln/kiln.h"
#include "kiln/tensorboard/event_file.hpp"

namespace kiln::train {

// Which of the optional scalars a run has.
struct TensorBoardScalars {
  bool loss_scale = false;     // loss scaling is on
  bool communication = false;  // a strategy reduces the gradients
  double peak_flops = 0.0;     // the device's at the run's precision; 0: unknown, no utilisation
};

class TensorBoardLog {
 public:
  // No folder: writing does nothing. Otherwise the folder and a new event
  // file in it are made now; failing names the folder or the file.
  TensorBoardLog(const char* directory, TensorBoardScalars optional);

  void write(const kiln_step_metrics& m);
  void write(const kiln_eval_metrics& m);

 private:
  std::unique_ptr<tensorboard::EventFileWriter> events_;
  TensorBoardScalars optional_;
};

}  // namespace kiln::train
