// The peak memory of one training step: the CPU allocator's, and the GPU
// allocator's when the model lives on a GPU, each counted from its own
// level at the start of the step (the peaks are reset then).
#pragma once

#include "kiln/device.hpp"
#include "kiln/kiln.h"
#include "kiln/kiln_training.h"

struct kiln_trainer;

namespace kiln::train {

// The statistics of `device`'s allocator in `rt`.
kiln_memory_stats memory_stats(kiln_runtime* rt, Device device);

// Where the model lives: its first parameter's device (the CPU for a model
// without parameters, which computes where its inputs are).
Device model_device(const kiln_trainer& t);

class StepMemory {
 public:
  // Resets the peaks of the allocators the step uses (the CPU's, and
  // `device`'s: model_device(t)).
  StepMemory(const kiln_trainer& t, Device device);
  // Fills peak_cpu_bytes and peak_gpu_bytes (0 when the model is on the CPU).
  void finish(kiln_step_metrics& m) const;

 private:
  kiln_runtime* runtime_;
  Device model_device_;
};

}  // namespace kiln::train
