// kiln::Trainer: the training loop of kiln_trainer (move-only: the C API
// has no retain for trainers), with std::function callbacks, and
// kiln::evaluate for a model without a trainer.
//
// A callback that throws stops training: its exception is caught before it
// reaches the library's frames, reported to the trainer as a failure
// (kiln_error_set: a kiln::Error keeps its status and message, any other
// exception becomes KILN_ERR_INVALID_STATE "on_step threw: ..."), and
// rethrown, as it was, to the caller of step(), run() or evaluate().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "error.hpp"
#include "handle.hpp"
#include "kiln/kiln.h"
#include "loader.hpp"
#include "module.hpp"
#include "optimizer.hpp"
#include "runtime.hpp"
#include "strategy.hpp"

namespace kiln {

using StepMetrics = kiln_step_metrics;
using EvalMetrics = kiln_eval_metrics;

enum class Progress { automatic = 0, bar = 1, lines = 2, quiet = 3 };

// kiln_trainer_options with C++ types. The trainer keeps its own references
// on the model, the optimizer and the loaders; the schedule and the
// strategy (optional) must outlive the trainer. Empty strings take the C
// defaults. A callback returns true to stop training after the current
// step.
struct TrainerOptions {
  Module model{nullptr};
  std::string loss;  // an op taking (output, target); "": "cross_entropy"
  Optimizer optimizer{nullptr};
  const LrSchedule* schedule = nullptr;
  Loader train{nullptr};
  Loader validation{nullptr};
  const Strategy* strategy = nullptr;
  int64_t epochs = 0;     // 0 with max_steps > 0: as many as max_steps needs
  int64_t max_steps = 0;  // 0: no limit but epochs
  int64_t accumulate = 1;
  double clip_grad_norm = 0.0;  // > 0: clip the total gradient norm to it
  int64_t eval_every = 0;       // steps between evaluations; 0: after every epoch
  int64_t log_every = 0;        // 0: every 50 steps
  Progress progress = Progress::automatic;
  std::string metrics_path;  // JSON lines of every step and evaluation; "": none
  std::string input_field;   // "": "input"
  std::string target_field;  // "": "target"
  std::function<bool(const StepMetrics&)> on_step;
  std::function<bool(const EvalMetrics&)> on_eval;
  std::function<bool(int64_t epoch, const StepMetrics& last_step)> on_epoch;
  int64_t checkpoint_every = 0;  // > 0: save(checkpoint_path) after every this many steps
  std::string checkpoint_path;
  std::string precision;  // "bf16" or "f16": forward and loss under autocast; "": f32
  bool precision_fallback = false;  // a precision the device lacks: f32 with a warning, not an error
  // Dynamic loss scaling (kiln_trainer_options.loss_scaling and loss_scale_*);
  // a value left 0 takes its default.
  int loss_scaling = 0;  // 0: on for "f16" only; 1: on; 2: off
  double loss_scale_init = 0.0;
  double loss_scale_growth = 0.0;
  double loss_scale_backoff = 0.0;
  int64_t loss_scale_interval = 0;
  double loss_scale_min = 0.0;
  std::string tensorboard_dir;  // a folder for TensorBoard event files; "": none
  bool report = false;          // print the training report on stderr when run() ends
  std::string trace_path;       // a trace of steps trace_first_step to trace_last_step; "": none
  int64_t trace_first_step = 0; // 0: the second step
  int64_t trace_last_step = 0;  // 0: the first traced step
};

namespace detail {
inline const char* c_string_or_null(const std::string& s) { return s.empty() ? nullptr : s.c_str(); }

inline EvalMetrics empty_eval_metrics() {
  EvalMetrics m{};
  m.size = sizeof m;
  return m;
}
}  // namespace detail

class Trainer {
 public:
  Trainer(const Runtime& rt, const TrainerOptions& options)
      : callbacks_(std::make_unique<Callbacks>(Callbacks{options.on_step, options.on_eval, options.on_epoch, {}})) {
    kiln_trainer_options o{};
    o.size = sizeof o;
    o.model = options.model.get();
    o.loss = detail::c_string_or_null(options.loss);
    o.optimizer = options.optimizer.get();
    o.schedule = options.schedule ? options.schedule->get() : nullptr;
    o.train = options.train.get();
    o.validation = options.validation.get();
    o.strategy = options.strategy ? options.strategy->get() : nullptr;
    o.epochs = options.epochs;
    o.max_steps = options.max_steps;
    o.accumulate = options.accumulate;
    o.clip_grad_norm = options.clip_grad_norm;
    o.eval_every = options.eval_every;
    o.log_every = options.log_every;
    o.progress = static_cast<int>(options.progress);
    o.metrics_path = detail::c_string_or_null(options.metrics_path);
    o.input_field = detail::c_string_or_null(options.input_field);
    o.target_field = detail::c_string_or_null(options.target_field);
    if (options.on_step) o.on_step = on_step;
    if (options.on_eval) o.on_eval = on_eval;
    if (options.on_epoch) o.on_epoch = on_epoch;
    o.user_data = callbacks_.get();
    o.checkpoint_every = options.checkpoint_every;
    o.checkpoint_path = detail::c_string_or_null(options.checkpoint_path);
    o.precision = detail::c_string_or_null(options.precision);
    o.precision_fallback = options.precision_fallback ? 1 : 0;
    o.loss_scaling = options.loss_scaling;
    o.loss_scale_init = options.loss_scale_init;
    o.loss_scale_growth = options.loss_scale_growth;
    o.loss_scale_backoff = options.loss_scale_backoff;
    o.loss_scale_interval = options.loss_scale_interval;
    o.loss_scale_min = options.loss_scale_min;
    o.tensorboard_dir = detail::c_string_or_null(options.tensorboard_dir);
    o.report = options.report ? 1 : 0;
    o.trace_path = detail::c_string_or_null(options.trace_path);
    o.trace_first_step = options.trace_first_step;
    o.trace_last_step = options.trace_last_step;
    kiln_trainer* trainer = nullptr;
    check(kiln_trainer_create(rt.get(), &o, &trainer));
    handle_ = Handle(trainer);
  }
  explicit Trainer(std::nullptr_t) noexcept {}
  Trainer(Trainer&&) noexcept = default;
  Trainer& operator=(Trainer&& other) noexcept {
    handle_ = std::move(other.handle_);  // the trainer this held goes before its callbacks
    callbacks_ = std::move(other.callbacks_);
    return *this;
  }

  kiln_trainer* get() const noexcept { return handle_.get(); }
  explicit operator bool() const noexcept { return static_cast<bool>(handle_); }

  // One optimizer step; nothing when training is over (then nothing was done).
  std::optional<StepMetrics> step() {
    StepMetrics m{};
    m.size = sizeof m;
    int done = 0;
    call_c([&] { return kiln_trainer_step(get(), &m, &done); });
    if (done) return std::nullopt;
    return m;
  }
  // Steps until done, evaluating as configured.
  void run() {
    call_c([&] { return kiln_trainer_run(get()); });
  }
  // The training report of the steps so far (kiln_trainer_report).
  std::string report() const {
    size_t length = 0;
    check(kiln_trainer_report(get(), nullptr, 0, &length));
    std::string text(length, '\0');
    check(kiln_trainer_report(get(), text.data(), length + 1, nullptr));
    return text;
  }
  // One pass over the validation loader, or over `loader`.
  EvalMetrics evaluate() { return evaluate_with(nullptr); }
  EvalMetrics evaluate(const Loader& loader) { return evaluate_with(loader.get()); }

  // The full training state, to continue exactly where it stands.
  void save(const std::string& path) {
    call_c([&] { return kiln_trainer_save(get(), path.c_str()); });
  }
  // Restores a state save() wrote, into a trainer made like the saved one.
  void load(const std::string& path) {
    call_c([&] { return kiln_trainer_load(get(), path.c_str()); });
  }

 private:
  using Handle = detail::UniqueHandle<kiln_trainer, kiln_trainer_release>;

  // The host's callbacks, where the C trainer's user_data points: on the
  // heap, so that moving the Trainer leaves the address the trainer holds.
  struct Callbacks {
    std::function<bool(const StepMetrics&)> on_step;
    std::function<bool(const EvalMetrics&)> on_eval;
    std::function<bool(int64_t, const StepMetrics&)> on_epoch;
    detail::ParkedException parked;
  };

  static int on_step(void* user_data, const kiln_step_metrics* m) {
    Callbacks* c = static_cast<Callbacks*>(user_data);
    return c->parked.call("on_step", [&] { return c->on_step(*m) ? 1 : 0; });
  }
  static int on_eval(void* user_data, const kiln_eval_metrics* m) {
    Callbacks* c = static_cast<Callbacks*>(user_data);
    return c->parked.call("on_eval", [&] { return c->on_eval(*m) ? 1 : 0; });
  }
  static int on_epoch(void* user_data, int64_t epoch, const kiln_step_metrics* last) {
    Callbacks* c = static_cast<Callbacks*>(user_data);
    return c->parked.call("on_epoch", [&] { return c->on_epoch(epoch, *last) ? 1 : 0; });
  }

  // A trainer call, during which callbacks may run: a callback's exception
  // comes first, then the call's own failure.
  template <class Call>
  void call_c(Call&& call) {
    const kiln_status status = call();
    if (callbacks_) callbacks_->parked.rethrow_if_any();
    check(status);
  }

  EvalMetrics evaluate_with(kiln_loader* loader) {
    EvalMetrics m = detail::empty_eval_metrics();
    call_c([&] { return kiln_trainer_evaluate(get(), loader, &m); });
    return m;
  }

  // Declared before the handle, so that the trainer goes first.
  std::unique_ptr<Callbacks> callbacks_;
  Handle handle_;
};

// One evaluation pass of `model` over `loader` without a trainer; empty
// strings take the defaults ("cross_entropy", "input", "target").
inline EvalMetrics evaluate(const Module& model, const Loader& loader, const std::string& loss = "",
                            const std::string& input_field = "", const std::string& target_field = "") {
  EvalMetrics m = detail::empty_eval_metrics();
  check(kiln_evaluate(model.get(), loader.get(), detail::c_string_or_null(loss), detail::c_string_or_null(input_field),
                      detail::c_string_or_null(target_field), &m));
  return m;
}

}  // namespace kiln
