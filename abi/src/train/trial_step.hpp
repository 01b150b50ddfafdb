// A trial training step on made-up data, to learn what a batch size costs
// in memory (kiln_memory_estimate_get, kiln_find_batch_size): the model's
// forward, the loss and backward on a zero-filled batch, with the state the
// optimizer would make for every parameter held alongside, as training
// holds it. Everything a trial makes is released before it returns, the
// gradients the parameters had are put back and the random stream is left
// where it was: a trial changes nothing and keeps nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/kiln_training.h"

namespace kiln::train {

struct TrialSpec {
  kiln_runtime* runtime = nullptr;
  kiln_module* model = nullptr;
  const kiln_op* loss = nullptr;
  bool class_targets = false;          // the loss takes class indices (cross_entropy, nll_loss)
  kiln_optimizer* optimizer = nullptr;  // may be null
  std::vector<int64_t> example_shape;  // one input, without the batch dimension
  kiln_dtype precision = KILN_F32;     // KILN_BF16 or KILN_F16: forward and loss under autocast
  kiln_device_type device = KILN_DEVICE_CPU;  // the model's, where the batch is made and memory measured
  int device_index = 0;
};

// The spec for `model` and the options of kiln_memory_estimate_get and
// kiln_find_batch_size (checked; `options` may be NULL).
TrialSpec make_trial_spec(kiln_module* model, const int64_t* input_shape, int input_rank,
                          const kiln_memory_plan_options* options);

struct TrialResult {
  bool out_of_memory = false;
  std::string message;          // the out-of-memory error
  int64_t start_bytes = 0;      // held on the device before the trial
  int64_t peak_bytes = 0;       // the device's highest during it
  int64_t optimizer_bytes = 0;  // the optimizer state the trial made (none where it existed already)
  int64_t gradient_bytes = 0;   // the gradients backward made
};

// One trial at `batch_size`. Running out of memory is a result; any other
// failure throws.
TrialResult run_trial(const TrialSpec& spec, int64_t batch_size);

}  // namespace kiln::train
