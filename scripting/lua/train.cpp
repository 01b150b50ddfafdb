// kiln.fit and kiln.evaluate: the trainer's loop runs in C++ (kiln_trainer_*),
// with Lua callbacks.
//
//   local last = kiln.fit{
//     model = m, loss = "cross_entropy",       -- an op name, or a kiln.nn loss without options
//     optimizer = opt, schedule = s,           -- schedule optional
//     train = loader, validation = loader2,    -- validation optional
//     epochs = 10, max_steps = 0, accumulate = 1, clip_grad_norm = 0,
//     eval_every = 0,                          -- steps between evaluations; 0: after every epoch
//     log_every = 50, progress = "auto",       -- "auto" | "bar" | "lines" | "quiet"
//     metrics = "run.jsonl",                   -- JSON lines of every step and evaluation
//     tensorboard = "runs/exp1",               -- a folder for TensorBoard's event files (scalars)
//     input_field = "input", target_field = "target",
//     on_step = function(m) end,               -- m: the fields of kiln_step_metrics by their C names
//     on_epoch = function(epoch, m) end,       --   (step, epoch, epoch_step, samples, loss, lr, grad_norm,
//     on_eval = function(m) end,               --   step_seconds, input_wait_seconds, samples_per_second,
//                                              --   device_input_wait_seconds, loss_scale, skipped (a boolean),
//                                              --   peak_cpu_bytes, peak_gpu_bytes, forward_seconds,
//                                              --   backward_seconds, communication_seconds,
//                                              --   optimizer_seconds, other_seconds, flops);
//                                              --   eval: step, epoch, samples, loss, accuracy, seconds
//     checkpoint = "run.safetensors",          -- the training state, saved when training ends
//     checkpoint_every = 100,                  --   and every this many steps (0: only at the end)
//     resume = "run.safetensors",              -- a training state to continue from (it must exist)
//     strategy = "ddp",                        -- spread over the job's processes (see kiln.dist); the
//     strategy_options = {bucket_mb = 25},     --   train loader must be made with shard = true;
//                                              --   "zero1": ddp with the optimizer's state sharded
//     precision = "bf16",                      -- "f32" (default), "bf16" or "f16": forward and loss under autocast
//     precision_fallback = true,               -- a precision the device lacks trains in f32 with a warning
//                                              --   (default false: an error before the first step)
//     loss_scale = {init = 65536, growth = 2,  -- dynamic loss scaling (on by default for "f16"): a table or
//                   backoff = 0.5,             --   true turns it on (absent fields take these defaults),
//                   interval = 2000, min = 1}, --   false turns it off
//     report = true,                           -- print the training report on stderr when training ends
//     trace = "trace.json",                    -- a Chrome/Perfetto trace of the steps trace_steps = {first, last}
//     trace_steps = {10, 12},                  --   (steps count from 1; default: the second step alone)
//   }
//   local last, report = kiln.fit{...}         -- report: the training report's text (kiln_trainer_report)
//
// A callback returning a true value stops training after the current step.
// An error raised in a callback stops training, and kiln.fit raises it again
// as it was raised. kiln.fit returns the metrics of the last evaluation, or
// of the last step when there was none (an empty table when nothing ran),
// and the training report.
// Epochs are numbered from 0, as in the metrics.
//
//   kiln.evaluate(model, loader, {loss = "cross_entropy"})   -- {loss=, accuracy=, samples=, seconds=, ...}
//
// evaluate runs one pass in eval mode without gradients (kiln_evaluate).
#include <memory>
#include <string>
#include <vector>

#include "data.hpp"
#include "nn_losses.hpp"
#include "nn_module.hpp"
#include "nn_shared.hpp"
#include "optim.hpp"
#include "sandbox.hpp"
#include "state.hpp"
#include "tensor_ref.hpp"

namespace kiln::lua {
namespace {

using TrainerRef = std::unique_ptr<kiln_trainer, decltype(&kiln_trainer_release)>;

void set_number(lua_State* L, const char* field, double value) {
  lua_pushnumber(L, value);
  lua_setfield(L, -2, field);
}
void set_integer(lua_State* L, const char* field, int64_t value) {
  lua_pushinteger(L, value);
  lua_setfield(L, -2, field);
}

void push_step_metrics(lua_State* L, const kiln_step_metrics& m) {
  lua_createtable(L, 0, 22);
  set_integer(L, "step", m.step);
  set_integer(L, "epoch", m.epoch);
  set_integer(L, "epoch_step", m.epoch_step);
  set_integer(L, "samples", m.samples);
  set_number(L, "loss", m.loss);
  set_number(L, "lr", m.lr);
  set_number(L, "grad_norm", m.grad_norm);
  set_number(L, "step_seconds", m.step_seconds);
  set_number(L, "input_wait_seconds", m.input_wait_seconds);
  set_number(L, "samples_per_second", m.samples_per_second);
  set_number(L, "device_input_wait_seconds", m.device_input_wait_seconds);
  set_number(L, "loss_scale", m.loss_scale);
  lua_pushboolean(L, m.skipped);
  lua_setfield(L, -2, "skipped");
  set_integer(L, "peak_cpu_bytes", m.peak_cpu_bytes);
  set_integer(L, "peak_gpu_bytes", m.peak_gpu_bytes);
  set_number(L, "forward_seconds", m.forward_seconds);
  set_number(L, "backward_seconds", m.backward_seconds);
  set_number(L, "communication_seconds", m.communication_seconds);
  set_number(L, "optimizer_seconds", m.optimizer_seconds);
  set_number(L, "other_seconds", m.other_seconds);
  set_number(L, "flops", m.flops);
}

void push_eval_metrics(lua_State* L, const kiln_eval_metrics& m) {
  lua_createtable(L, 0, 6);
  set_integer(L, "step", m.step);
  set_integer(L, "epoch", m.epoch);
  set_integer(L, "samples", m.samples);
  set_number(L, "loss", m.loss);
  set_number(L, "accuracy", m.accuracy);
  set_number(L, "seconds", m.seconds);
}

// What the C callbacks of one kiln.fit share. The trainer calls them on the
// thread running kiln.fit, from inside kiln_trainer_run.
struct FitState {
  lua_State* L = nullptr;
  int on_step = LUA_NOREF, on_epoch = LUA_NOREF, on_eval = LUA_NOREF;  // registry refs
  int error = LUA_NOREF;  // the value a callback raised
  bool stepped = false, evaluated = false;
  kiln_step_metrics last_step{};
  kiln_eval_metrics last_eval{};
  // The callback being called and its arguments.
  int callback = LUA_NOREF;
  bool is_epoch = false;
  int64_t epoch = 0;
  const kiln_step_metrics* step_arg = nullptr;  // nullptr: an epoch without a step
  const kiln_eval_metrics* eval_arg = nullptr;
};

// Calls the Lua callback (inside lua_pcall: building its arguments may
// raise too) and pushes whether it asked to stop.
int call_callback(lua_State* L) {
  auto* s = static_cast<FitState*>(lua_touserdata(L, 1));
  lua_rawgeti(L, LUA_REGISTRYINDEX, s->callback);
  if (s->is_epoch) lua_pushinteger(L, s->epoch);
  if (s->eval_arg)
    push_eval_metrics(L, *s->eval_arg);
  else if (s->step_arg)
    push_step_metrics(L, *s->step_arg);
  else
    lua_pushnil(L);
  lua_call(L, s->is_epoch ? 2 : 1, 1);
  lua_pushboolean(L, lua_toboolean(L, -1));
  return 1;
}

// Runs `callback` (a registry ref, or LUA_NOREF: nothing to call) with the
// arguments set in `s`; returns the trainer's callback result. Nothing may
// be thrown back into the trainer: a Lua error is kept in s->error and
// reported as a failure, which stops training.
int run_callback(FitState* s, int callback) {
  if (callback == LUA_NOREF) return 0;
  lua_State* L = s->L;
  s->callback = callback;
  try {
    lua_pushcfunction(L, call_callback);
    lua_pushlightuserdata(L, s);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
      const std::string message = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "a callback raised an error";
      s->error = luaL_ref(L, LUA_REGISTRYINDEX);
      return kiln_error_set(KILN_ERR_SCRIPT, message.c_str());
    }
    const bool stop = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return stop ? 1 : 0;
  } catch (...) {
    return kiln_error_set(KILN_ERR_SCRIPT, "a Lua callback of kiln.fit failed outside Lua's error handling");
  }
}

int on_step(void* user, const kiln_step_metrics* metrics) {
  auto* s = static_cast<FitState*>(user);
  s->last_step = *metrics;
  s->stepped = true;
  s->is_epoch = false;
  s->step_arg = metrics;
  s->eval_arg = nullptr;
  return run_callback(s, s->on_step);
}

int on_eval(void* user, const kiln_eval_metrics* metrics) {
  auto* s = static_cast<FitState*>(user);
  s->last_eval = *metrics;
  s->evaluated = true;
  s->is_epoch = false;
  s->step_arg = nullptr;
  s->eval_arg = metrics;
  return run_callback(s, s->on_eval);
}

int on_epoch(void* user, int64_t epoch, const kiln_step_metrics* last_step) {
  auto* s = static_cast<FitState*>(user);
  s->is_epoch = true;
  s->epoch = epoch;
  s->step_arg = last_step;
  s->eval_arg = nullptr;
  return run_callback(s, s->on_epoch);
}

// A registry ref on the function options[field], or LUA_NOREF when absent.
int ref_callback(lua_State* L, int options, const char* field) {
  const int type = lua_getfield(L, options, field);
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
    return LUA_NOREF;
  }
  if (type != LUA_TFUNCTION) luaL_error(L, "kiln.fit: '%s' must be a function, got a %s", field, luaL_typename(L, -1));
  return luaL_ref(L, LUA_REGISTRYINDEX);
}

// Drops the registry refs of a FitState when kiln.fit leaves, also by error.
struct FitRefs {
  FitState& s;
  ~FitRefs() {
    for (int ref : {s.on_step, s.on_epoch, s.on_eval, s.error}) luaL_unref(s.L, LUA_REGISTRYINDEX, ref);
  }
};

// options[field] as a handle of `kind`; nullptr when absent.
void* opt_handle(lua_State* L, int options, const char* field, const char* kind) {
  if (lua_getfield(L, options, field) == LUA_TNIL) {
    lua_pop(L, 1);
    return nullptr;
  }
  void* handle = test_handle(L, -1, kind);
  if (!handle) luaL_error(L, "kiln.fit: '%s' must be a %s, got a %s", field, kind, luaL_typename(L, -1));
  lua_pop(L, 1);  // the options table keeps it alive
  return handle;
}

void* required_handle(lua_State* L, int options, const char* field, const char* kind) {
  void* handle = opt_handle(L, options, field, kind);
  if (!handle) luaL_error(L, "kiln.fit: '%s' (a %s) is required", field, kind);
  return handle;
}

int check_progress(lua_State* L, int options) {
  const std::string progress = opt_string_field(L, options, "progress");
  constexpr const char* kModes[] = {"auto", "bar", "lines", "quiet"};
  if (progress.empty()) return 0;
  for (int mode = 0; mode < 4; ++mode)
    if (progress == kModes[mode]) return mode;
  luaL_error(L, "kiln.fit: progress is '%s'; expected \"auto\", \"bar\", \"lines\" or \"quiet\"", progress.c_str());
  return 0;
}

// The loss op named by options.loss (default: the trainer's, cross_entropy).
std::string opt_loss(lua_State* L, int options) {
  if (lua_isnoneornil(L, options) || lua_getfield(L, options, "loss") == LUA_TNIL) return {};
  std::string loss = check_trainer_loss(L, -1);
  lua_pop(L, 1);
  return loss;
}

// options.loss_scale into o: true or a table of settings turns dynamic loss
// scaling on, false off; absent leaves the trainer's default (on for f16).
void opt_loss_scale(lua_State* L, int options, kiln_trainer_options& o) {
  const int type = lua_getfield(L, options, "loss_scale");
  if (type == LUA_TBOOLEAN) {
    o.loss_scaling = lua_toboolean(L, -1) ? 1 : 2;
  } else if (type == LUA_TTABLE) {
    const int table = lua_gettop(L);
    check_known_fields(L, table, "kiln.fit: loss_scale", {"init", "growth", "backoff", "interval", "min"});
    o.loss_scaling = 1;
    o.loss_scale_init = opt_number_field(L, table, "init", 0);
    o.loss_scale_growth = opt_number_field(L, table, "growth", 0);
    o.loss_scale_backoff = opt_number_field(L, table, "backoff", 0);
    o.loss_scale_interval = opt_integer_field(L, table, "interval", 0);
    o.loss_scale_min = opt_number_field(L, table, "min", 0);
  } else if (type != LUA_TNIL) {
    luaL_error(L, "kiln.fit: loss_scale must be a boolean or a table of settings, got a %s", luaL_typename(L, -1));
  }
  lua_pop(L, 1);
}

using StrategyRef = std::unique_ptr<kiln_strategy, decltype(&kiln_strategy_release)>;

// options.strategy: a registered strategy's name ("single", "ddp", "zero1") made with
// options.strategy_options; none when absent.
StrategyRef opt_strategy(lua_State* L, int options) {
  const std::string name = opt_string_field(L, options, "strategy");
  if (name.empty()) return StrategyRef(nullptr, kiln_strategy_release);
  if (lua_getfield(L, options, "strategy_options") != LUA_TNIL && !lua_istable(L, -1))
    luaL_error(L, "kiln.fit: strategy_options must be a table, got %s", luaL_typename(L, -1));
  const AttrList attrs(L, lua_gettop(L));  // copies what it needs
  lua_pop(L, 1);
  kiln_strategy* s = nullptr;
  check(L, kiln_strategy_create(runtime(L), name.c_str(), attrs.data(), attrs.size(), &s));
  return StrategyRef(s, kiln_strategy_release);
}

// trace_steps = {first, last}: the steps a trace covers.
void opt_trace_steps(lua_State* L, int options, kiln_trainer_options& o) {
  const int type = lua_getfield(L, options, "trace_steps");
  if (type != LUA_TNIL) {
    const bool pair = type == LUA_TTABLE && luaL_len(L, -1) == 2;
    if (!pair) luaL_error(L, "kiln.fit: trace_steps must be a table {first, last} of step numbers");
    lua_geti(L, -1, 1);
    lua_geti(L, -2, 2);
    int first_ok = 0, last_ok = 0;
    o.trace_first_step = lua_tointegerx(L, -2, &first_ok);
    o.trace_last_step = lua_tointegerx(L, -1, &last_ok);
    if (!first_ok || !last_ok) luaL_error(L, "kiln.fit: trace_steps must be a table {first, last} of step numbers");
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
}

// The trainer's report as a Lua string.
void push_report(lua_State* L, kiln_trainer* trainer) {
  size_t length = 0;
  check(L, kiln_trainer_report(trainer, nullptr, 0, &length));
  std::string text(length, '\0');
  check(L, kiln_trainer_report(trainer, text.data(), text.size() + 1, &length));
  lua_pushlstring(L, text.data(), length);
}

// kiln.fit{...}
int fit(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  check_known_fields(L, 1, "kiln.fit",
                     {"model", "loss", "optimizer", "schedule", "train", "validation", "epochs", "max_steps",
                      "accumulate", "clip_grad_norm", "eval_every", "log_every", "progress", "metrics",
                      "input_field", "target_field", "on_step", "on_epoch", "on_eval", "checkpoint",
                      "checkpoint_every", "resume", "strategy", "strategy_options", "precision", "precision_fallback",
                      "loss_scale", "tensorboard", "report", "trace", "trace_steps"});
  const std::string loss = opt_loss(L, 1);
  const std::string metrics = opt_string_field(L, 1, "metrics");
  const std::string tensorboard = opt_string_field(L, 1, "tensorboard");
  const std::string input_field = opt_string_field(L, 1, "input_field");
  const std::string target_field = opt_string_field(L, 1, "target_field");
  const std::string checkpoint = opt_string_field(L, 1, "checkpoint");
  const std::string resume = opt_string_field(L, 1, "resume");
  const std::string precision = opt_string_field(L, 1, "precision");
  if (!metrics.empty()) refuse_files_in_sandbox(L, "kiln.fit: metrics");
  if (!tensorboard.empty()) refuse_files_in_sandbox(L, "kiln.fit: tensorboard");
  const std::string trace = opt_string_field(L, 1, "trace");
  if (!trace.empty()) refuse_files_in_sandbox(L, "kiln.fit: trace");
  if (!checkpoint.empty()) refuse_files_in_sandbox(L, "kiln.fit: checkpoint");
  if (!resume.empty()) refuse_files_in_sandbox(L, "kiln.fit: resume");

  kiln_trainer_options o{};
  o.size = sizeof o;
  o.model = static_cast<kiln_module*>(required_handle(L, 1, "model", kModule));
  o.optimizer = static_cast<kiln_optimizer*>(required_handle(L, 1, "optimizer", kOptimizer));
  o.schedule = static_cast<kiln_lr_schedule*>(opt_handle(L, 1, "schedule", kSchedule));
  o.train = static_cast<kiln_loader*>(required_handle(L, 1, "train", kLoader));
  o.validation = static_cast<kiln_loader*>(opt_handle(L, 1, "validation", kLoader));
  o.loss = loss.empty() ? nullptr : loss.c_str();
  o.epochs = opt_integer_field(L, 1, "epochs", 1);
  o.max_steps = opt_integer_field(L, 1, "max_steps", 0);
  o.accumulate = opt_integer_field(L, 1, "accumulate", 1);
  o.clip_grad_norm = opt_number_field(L, 1, "clip_grad_norm", 0);
  o.eval_every = opt_integer_field(L, 1, "eval_every", 0);
  o.log_every = opt_integer_field(L, 1, "log_every", 50);
  o.progress = check_progress(L, 1);
  o.metrics_path = metrics.empty() ? nullptr : metrics.c_str();
  o.tensorboard_dir = tensorboard.empty() ? nullptr : tensorboard.c_str();
  o.input_field = input_field.empty() ? nullptr : input_field.c_str();
  o.target_field = target_field.empty() ? nullptr : target_field.c_str();
  o.checkpoint_path = checkpoint.empty() ? nullptr : checkpoint.c_str();
  o.checkpoint_every = opt_integer_field(L, 1, "checkpoint_every", 0);
  o.precision = precision.empty() ? nullptr : precision.c_str();
  o.precision_fallback = opt_boolean_field(L, 1, "precision_fallback", false) ? 1 : 0;
  opt_loss_scale(L, 1, o);
  o.report = opt_boolean_field(L, 1, "report", false) || state_data(L).report_every_fit ? 1 : 0;
  o.trace_path = trace.empty() ? nullptr : trace.c_str();
  opt_trace_steps(L, 1, o);

  FitState s;
  s.L = L;
  const FitRefs refs{s};
  s.on_step = ref_callback(L, 1, "on_step");
  s.on_epoch = ref_callback(L, 1, "on_epoch");
  s.on_eval = ref_callback(L, 1, "on_eval");
  o.on_step = kiln::lua::on_step;
  o.on_eval = kiln::lua::on_eval;
  o.on_epoch = kiln::lua::on_epoch;
  o.user_data = &s;

  const StrategyRef strategy = opt_strategy(L, 1);
  o.strategy = strategy.get();

  kiln_trainer* raw = nullptr;
  check(L, kiln_trainer_create(runtime(L), &o, &raw));
  const TrainerRef trainer(raw, kiln_trainer_release);
  if (!resume.empty()) check(L, kiln_trainer_load(trainer.get(), resume.c_str()));
  kiln_status status = kiln_trainer_run(trainer.get());
  // The final state too, so that a finished run can be continued with more epochs.
  if (status == KILN_OK && !checkpoint.empty()) status = kiln_trainer_save(trainer.get(), checkpoint.c_str());
  if (s.error != LUA_NOREF) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, s.error);
    lua_error(L);
  }
  check(L, status);
  if (s.evaluated)
    push_eval_metrics(L, s.last_eval);
  else if (s.stepped)
    push_step_metrics(L, s.last_step);
  else
    lua_newtable(L);
  push_report(L, trainer.get());
  return 2;
}

// kiln.evaluate(model, loader, {loss = ..., input_field = ..., target_field = ...})
int evaluate(lua_State* L) {
  kiln_module* model = check_module(L, 1);
  kiln_loader* loader = check_loader(L, 2);
  if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
  check_known_fields(L, 3, "kiln.evaluate", {"loss", "input_field", "target_field"});
  const std::string loss = opt_loss(L, 3);
  const std::string input_field = opt_string_field(L, 3, "input_field");
  const std::string target_field = opt_string_field(L, 3, "target_field");
  kiln_eval_metrics metrics{};
  metrics.size = sizeof metrics;
  check(L, kiln_evaluate(model, loader, loss.empty() ? nullptr : loss.c_str(),
                         input_field.empty() ? nullptr : input_field.c_str(),
                         target_field.empty() ? nullptr : target_field.c_str(), &metrics));
  push_eval_metrics(L, metrics);
  return 1;
}

constexpr luaL_Reg kFunctions[] = {
    {"fit", guarded<fit>},
    {"evaluate", guarded<evaluate>},
    {nullptr, nullptr},
};

}  // namespace

void open_train(lua_State* L) { luaL_setfuncs(L, kFunctions, 0); }

}  // namespace kiln::lua
