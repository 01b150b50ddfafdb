// What a kiln_trainer handle is: the options (checked, defaults filled in),
// the ops the loop calls, the model's parameters, and where training
// stands. The trainer drives the model, optimizer, loaders and strategy
// through the C API only, as any host could.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/profiler/device_timeline.hpp"
#include "train/api_call.hpp"
#include "train/loss_scale.hpp"
#include "train/metrics_log.hpp"
#include "train/progress.hpp"
#include "train/run_report.hpp"
#include "train/step_trace.hpp"
#include "train/tensorboard_log.hpp"

namespace kiln::train {

using RuntimeRef = abi::RuntimeRef;

// Ops the loop calls, looked up once at creation.
struct TrainOps {
  const kiln_op* loss = nullptr;
  const kiln_op* mul = nullptr;
  const kiln_op* sum = nullptr;
  const kiln_op* norm = nullptr;
  const kiln_op* add = nullptr;
  const kiln_op* sqrt = nullptr;
  const kiln_op* mul_scalar = nullptr;
  const kiln_op* cast = nullptr;
};

// kiln_trainer_options, checked, with the defaults filled in.
struct TrainerConfig {
  RuntimeRef runtime;
  ModuleRef model;
  OptimizerRef optimizer;
  LoaderRef train;
  LoaderRef validation;  // may be empty
  // Schedules and strategies have no retain in the C API: the caller keeps
  // them alive as long as the trainer (see kiln.h).
  kiln_lr_schedule* schedule = nullptr;
  kiln_strategy* strategy = nullptr;
  std::string loss_name;
  int64_t epochs = 0;
  int64_t max_steps = 0;
  int64_t accumulate = 1;
  double clip_grad_norm = 0.0;
  int64_t eval_every = 0;
  int64_t log_every = 50;
  int progress = 0;
  std::string input_field;
  std::string target_field;
  kiln_step_fn on_step = nullptr;
  kiln_eval_fn on_eval = nullptr;
  kiln_epoch_fn on_epoch = nullptr;
  void* user_data = nullptr;
  int64_t checkpoint_every = 0;  // 0: none
  std::string checkpoint_path;
  kiln_dtype precision = KILN_F32;  // KILN_BF16 or KILN_F16: autocast around forward and loss
  LossScaleConfig loss_scale;
  bool print_report = false;  // at the end of kiln_trainer_run
};

// Where training stands.
struct TrainState {
  int64_t step = 0;     // optimizer steps taken, skipped ones included
  int64_t updates = 0;  // of those, the ones that updated the parameters: the schedule's step
  int64_t epoch = 0;  // the epoch being trained, or the next one to start
  bool epoch_started = false;
  int64_t epoch_step = 0;     // steps taken in this epoch
  int64_t epoch_batches = 0;  // micro-batches taken from this epoch
  int64_t epoch_samples = 0;
  double epoch_seconds = 0.0;  // spent in this epoch's steps
  bool stop_requested = false;
  LossScaleState loss_scale;
  kiln_step_metrics last_step{};
};

}  // namespace kiln::train

struct kiln_trainer {
  kiln::train::TrainerConfig config;
  kiln::train::TrainOps ops;
  std::vector<kiln::train::TensorRef> params;  // the model's, in its order
  std::vector<double> base_lrs;                // each group's lr when the trainer was made
  int rank = 0;                                // of the strategy's processes
  int world_size = 1;
  int64_t batches_per_epoch = 0;               // of the train loader
  int64_t steps_per_epoch = 0;
  std::unique_ptr<kiln::train::MetricsLog> metrics;
  std::unique_ptr<kiln::train::TensorBoardLog> tensorboard;
  std::unique_ptr<kiln::train::Progress> progress;
  kiln::train::RunReport report;
  std::unique_ptr<kiln::train::StepTrace> trace;  // null: no trace asked for
  std::unique_ptr<kiln::DeviceTimeline> timeline;  // the model's GPU, for the step split; null on the CPU
  kiln::train::TrainState state;
};

namespace kiln::train {

struct ModelLoss;

// A trainer for `options` (see kiln_trainer_create), or an error saying
// which option is wrong and what was expected.
std::unique_ptr<kiln_trainer> make_trainer(kiln_runtime* rt, const kiln_trainer_options& options);

// True when training is over: epochs or max_steps reached, or a callback
// asked to stop.
bool training_done(const kiln_trainer& t);

// One optimizer step (the trainer must not be done), with the end of its
// epoch when it took the epoch's last batch; `evaluate` runs the
// evaluations the options ask for (kiln_trainer_run does, kiln_trainer_step
// leaves them to the host).
kiln_step_metrics train_step(kiln_trainer& t, bool evaluate);

// One pass over `loader` in eval mode without gradients (see kiln_trainer_evaluate).
kiln_eval_metrics evaluate(kiln_trainer& t, kiln_loader* loader);
// The same without a trainer (see kiln_evaluate): step and epoch are 0,
// nothing is logged and no callback runs.
kiln_eval_metrics evaluate(const ModelLoss& m, kiln_loader* loader);

// The gradients of `params`, for those that have one.
std::vector<TensorRef> present_gradients(const std::vector<TensorRef>& params);

// The total norm of the gradients of `params` (those that have one),
// computed with ops on their device; when `max_norm` > 0 and the norm is
// above it, the gradients are scaled in place so that it becomes max_norm.
double clip_gradients(kiln_runtime* rt, const TrainOps& ops, const std::vector<TensorRef>& params, double max_norm);

}  // namespace kiln::train
