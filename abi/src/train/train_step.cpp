// One optimizer step: `accumulate` micro-batches of forward, loss and
// backward, then the strategy's gradient reduction, unscaling and the
// overflow check of loss scaling, clipping, the schedule and the optimizer;
// then the step is reported (metrics file, progress, callbacks) and, after
// an epoch's last batch, the epoch is closed.
#include <algorithm>
#include <vector>

#include "checkpoint/training_state.hpp"
#include "handles.hpp"
#include "kiln/error.hpp"
#include "kiln/ops/flop_count.hpp"
#include "kiln/profiler/step_clock.hpp"
#include "train/batch_loss.hpp"
#include "train/callback.hpp"
#include "train/report_profile.hpp"
#include "train/step_memory.hpp"
#include "train/step_trace.hpp"
#include "train/trainer.hpp"

namespace kiln::train {
namespace {

void begin_epoch(kiln_trainer& t) {
  TrainState& s = t.state;
  check_call(kiln_loader_start_epoch(t.config.train.get(), s.epoch),
             str_cat("starting epoch ", s.epoch, " of the train loader"));
  s.epoch_started = true;
  s.epoch_step = 0;
  s.epoch_batches = 0;
  s.epoch_samples = 0;
  s.epoch_seconds = 0.0;
}

kiln_loader_stats train_loader_stats(kiln_trainer& t) {
  kiln_loader_stats stats{};
  stats.size = sizeof stats;
  check_call(kiln_loader_stats_get(t.config.train.get(), &stats), "reading the train loader's statistics");
  return stats;
}

// The next batch of the current epoch.
ExamplePtr next_batch(kiln_trainer& t) {
  TrainState& s = t.state;
  kiln_example* batch = nullptr;
  check_call(kiln_loader_next(t.config.train.get(), &batch),
             str_cat("taking batch ", s.epoch_batches, " of epoch ", s.epoch, " from the train loader"));
  ExamplePtr owned(batch);
  KILN_CHECK(owned, Status::invalid_state, "the train loader ended epoch ", s.epoch, " after ", s.epoch_batches,
             " batches, but kiln_loader_length said it has ", t.batches_per_epoch);
  ++s.epoch_batches;
  return owned;
}

// Seconds the GPU has waited for the train loader's input copies so far.
double device_input_wait(kiln_trainer& t) { return train_loader_stats(t).device_wait_seconds; }

struct MicroBatch {
  double loss = 0.0;
  int64_t samples = 0;
};

// Forward, loss and backward of one micro-batch, whose loss counts for
// `weight` of the step's: gradients of the step's micro-batches add up to
// those of their mean loss (times the loss scale, when scaling is on).
// `last` marks the micro-batch after which the strategy reduces the
// gradients. The phases are charged to the step's split.
MicroBatch train_micro_batch(kiln_trainer& t, const kiln_example* batch, double weight, bool last,
                             StepClock& clock, kiln_step_metrics& split) {
  kiln_runtime* rt = t.config.runtime.get();
  const ModelLoss m = model_loss(t);
  const BatchLoss b = forward_loss(m, batch);
  clock.charge(&split.forward_seconds, "forward");
  const kiln_attr value = kiln_attr_float("value", weight * t.state.loss_scale.scale);
  const TensorRef weighted = call_op(rt, t.ops.mul_scalar, {b.loss.get()}, &value, 1, "weighting the loss");
  if (t.config.strategy) {
    check_call(kiln_strategy_backward_begin(t.config.strategy, last ? 1 : 0), "preparing the strategy for backward");
  }
  check_call(kiln_backward(rt, weighted.get(), nullptr, 0), "backward of the loss");
  // After backward: on a GPU, reading the loss waits for what was queued.
  const MicroBatch result{loss_value(m, b), b.samples};
  clock.charge(&split.backward_seconds, "backward");
  return result;
}

// Every group's rate becomes schedule(step, the group's base rate).
void apply_schedule(kiln_trainer& t) {
  const TrainerConfig& c = t.config;
  if (!c.schedule) return;
  for (size_t g = 0; g < t.base_lrs.size(); ++g) {
    double lr = 0.0;
    check_call(kiln_lr_schedule_lr(c.schedule, t.state.updates, t.base_lrs[g], &lr), "the learning-rate schedule");
    check_call(kiln_optimizer_set_hyper(c.optimizer.get(), g, "lr", lr), "setting the scheduled learning rate");
  }
}

// Divides the gradients by the loss scale and moves the scale on; false
// when they hold inf or NaN, and the step must be skipped.
bool unscale_and_check(kiln_trainer& t) {
  const TrainerConfig& c = t.config;
  if (!c.loss_scale.enabled) return true;
  LossScaleState& scale = t.state.loss_scale;
  const bool finite = unscale_gradients(c.runtime.get(), t.ops, t.params, scale.scale);
  update_loss_scale(c.loss_scale, scale, finite, t.state.step + 1);
  return finite;
}

// Reduction, unscaling, clipping, schedule, update; fills grad_norm, lr and
// skipped, and charges the communication and optimizer phases.
void update_parameters(kiln_trainer& t, kiln_step_metrics& m, StepClock& clock) {
  const TrainerConfig& c = t.config;
  if (c.strategy) {
    std::vector<kiln_tensor*> params;
    for (const TensorRef& p : t.params) params.push_back(p.get());
    check_call(kiln_strategy_reduce_gradients(c.strategy, params.data(), params.size()), "reducing the gradients");
    clock.charge(&m.communication_seconds, "reduce gradients");
  }
  // After the reduction, so that every process takes the same decision, and
  // before clipping, which must see the true norm.
  m.skipped = unscale_and_check(t) ? 0 : 1;
  if (!m.skipped) {
    // After the reduction, so that every process clips the same (global) gradient.
    m.grad_norm = clip_gradients(c.runtime.get(), t.ops, t.params, c.clip_grad_norm);
    apply_schedule(t);
    if (c.strategy) {
      // A strategy that shards the optimizer's state updates this rank's share and shares the result.
      check_call(kiln_strategy_optimizer_step(c.strategy, c.optimizer.get()), "the optimizer step");
    } else {
      check_call(kiln_optimizer_step(c.optimizer.get()), "the optimizer step");
    }
    t.state.updates += 1;
  }
  // The rate this step used; a skipped step reports the one in force.
  check_call(kiln_optimizer_get_hyper(c.optimizer.get(), 0, "lr", &m.lr), "reading the learning rate");
  check_call(kiln_optimizer_zero_grad(c.optimizer.get()), "clearing the gradients");
  clock.charge(&m.optimizer_seconds, "optimizer");
}

// The timeline of the model's `device`, made when first needed; null on the CPU.
DeviceTimeline* model_timeline(kiln_trainer& t, Device device) {
  if (device.is_cpu()) return nullptr;
  if (!t.timeline || t.timeline->device() != device) t.timeline = make_device_timeline(device);
  return t.timeline.get();
}

// The forward/backward passes and the update of one step.
kiln_step_metrics compute_step(kiln_trainer& t) {
  Profiler& profiler = t.config.runtime.get()->runtime.profiler();
  if (t.trace) t.trace->begin_step(t.state.step + 1);
  const ReportProfileScope profile(t);
  const StepSpan span(profiler, t.state.step + 1);
  const Device device = model_device(t);
  StepClock clock(profiler, model_timeline(t, device));
  TrainState& s = t.state;
  if (!s.epoch_started) begin_epoch(t);
  const int64_t micro_batches = std::min(t.config.accumulate, t.batches_per_epoch - s.epoch_batches);
  kiln_step_metrics m{};
  m.size = sizeof m;
  m.loss_scale = s.loss_scale.scale;
  double loss_sum = 0.0;
  const double device_wait_before = device_input_wait(t);
  const double flops_before = flops_counted_on_this_thread();
  const StepMemory memory(t, device);
  try {
    clock.charge(&m.other_seconds, "other");
    for (int64_t i = 0; i < micro_batches; ++i) {
      const ExamplePtr batch = next_batch(t);
      clock.charge(&m.input_wait_seconds, "input wait");
      const MicroBatch r =
          train_micro_batch(t, batch.get(), 1.0 / double(micro_batches), i + 1 == micro_batches, clock, m);
      loss_sum += r.loss;
      m.samples += r.samples;
    }
    update_parameters(t, m, clock);
    // Reading each micro-batch's loss waited for the GPU, so the waits of
    // this step's copies have been measured by now.
    m.device_input_wait_seconds = device_input_wait(t) - device_wait_before;
    m.flops = flops_counted_on_this_thread() - flops_before;
    memory.finish(m);
    clock.charge(&m.other_seconds, "other");
  } catch (...) {
    // The next step starts from clean gradients, not from half of this one's.
    kiln_optimizer_zero_grad(t.config.optimizer.get());
    throw;
  }
  m.step_seconds = clock.finish(&m.other_seconds);
  s.step += 1;
  s.epoch_step += 1;
  s.epoch_samples += m.samples;
  s.epoch_seconds += m.step_seconds;
  m.step = s.step;
  m.epoch = s.epoch;
  m.epoch_step = s.epoch_step;
  m.loss = loss_sum / double(micro_batches);
  m.samples_per_second = s.epoch_seconds > 0.0 ? double(s.epoch_samples) / s.epoch_seconds : 0.0;
  s.last_step = m;
  return m;
}

bool evaluation_due(const kiln_trainer& t, bool epoch_over) {
  const TrainerConfig& c = t.config;
  if (!c.validation.get()) return false;
  return c.eval_every > 0 ? t.state.step % c.eval_every == 0 : epoch_over;
}

}  // namespace

bool training_done(const kiln_trainer& t) {
  const TrainerConfig& c = t.config;
  const TrainState& s = t.state;
  return s.stop_requested || (c.max_steps > 0 && s.step >= c.max_steps) || (c.epochs > 0 && s.epoch >= c.epochs);
}

kiln_step_metrics train_step(kiln_trainer& t, bool evaluate_as_configured) {
  const kiln_step_metrics m = compute_step(t);
  if (t.trace) t.trace->end_step(m.step);
  TrainState& s = t.state;
  const TrainerConfig& c = t.config;
  // The state moves to the next epoch before anything is reported, so that
  // a callback that fails leaves a trainer that can go on.
  const bool epoch_over = s.epoch_batches == t.batches_per_epoch;
  if (epoch_over) {
    s.epoch += 1;
    s.epoch_started = false;
  }
  t.report.add(m);
  t.metrics->write(m);
  t.tensorboard->write(m);
  t.progress->step(m, s.epoch_seconds);
  if (epoch_over) t.progress->end_epoch();
  // Before the callbacks, so that a host stopping at this step finds it saved.
  if (c.checkpoint_every > 0 && s.step % c.checkpoint_every == 0) save_training_state(t, c.checkpoint_path);
  if (c.on_step && run_callback("on_step", [&] { return c.on_step(c.user_data, &m); })) s.stop_requested = true;
  if (evaluate_as_configured && evaluation_due(t, epoch_over)) evaluate(t, c.validation.get());
  if (epoch_over && c.on_epoch &&
      run_callback("on_epoch", [&] { return c.on_epoch(c.user_data, m.epoch, &m); }))
    s.stop_requested = true;
  return m;
}

}  // namespace kiln::train
