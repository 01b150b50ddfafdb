// The peak memory of one training step: the CPU allocator's, and the GPU
// allocator's when the model lives on a GPU, each counted from its own
// level at the start of the step (the peaks are reset then).
#pragma once

#include "kiln/kiln.h"
#include "kiln/kiln_training.h"

struct kiln_trainer;

namespace kiln::train {

class StepMemory {
 public:
  // Resets the peaks of the allocators the step uses.
  explicit StepMemory(const kiln_trainer& t);
  // Fills peak_cpu_bytes and peak_gpu_bytes (0 when the model is on the CPU).
  void finish(kiln_step_metrics& m) const;

 private:
  kiln_runtime* runtime_;
  kiln_device_type model_device_ = KILN_DEVICE_CPU;
  int model_device_index_ = 0;
};

}  // namespace kiln::train
