// Dynamic loss scaling for low-precision training, with the semantics of
// PyTorch's GradScaler: the loss is multiplied by the scale before
// backward; once per optimizer step the gradients are divided by it and
// checked; a step with inf or NaN in its gradients is skipped and the scale
// backs off, and a run of clean steps makes it grow.
#pragma once

#include <cstdint>
#include <vector>

#include "train/api_call.hpp"

namespace kiln::train {

struct TrainOps;

// kiln_trainer_options' loss_scale_* fields, checked, defaults filled in.
struct LossScaleConfig {
  bool enabled = false;
  double initial = 65536.0;
  double growth = 2.0;
  double backoff = 0.5;
  int64_t interval = 2000;
  double min = 1.0;
};

// What changes as training goes: part of the saved training state.
struct LossScaleState {
  double scale = 1.0;
  int64_t clean_steps = 0;  // steps without inf or NaN since the scale last changed
};

// The state a run starts from: the initial scale when enabled, else 1.
LossScaleState initial_loss_scale(const LossScaleConfig& c);

// Divides the gradients of `params` (those that have one) by `scale` in
// place; true when every element is finite afterwards.
bool unscale_gradients(kiln_runtime* rt, const TrainOps& ops, const std::vector<TensorRef>& params, double scale);

// The scale after optimizer step `step` (1-based), whose gradients were
// `finite` or not. Throws Status::invalid_state when a step overflows at
// the minimum scale: no smaller scale is left to try.
void update_loss_scale(const LossScaleConfig& c, LossScaleState& s, bool finite, int64_t step);

}  // namespace kiln::train
