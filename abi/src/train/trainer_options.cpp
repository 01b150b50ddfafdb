// kiln_trainer_options read into a trainer: every option is checked here,
// so that a mistake is reported at creation, not some steps into a run.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "convert.hpp"
#include "data/loader.hpp"
#include "kiln/error.hpp"
#include "kiln/ops/autocast.hpp"
#include "module/module_handle.hpp"
#include "optim/optimizer_handle.hpp"
#include "train/rank_agreement.hpp"
#include "train/step_memory.hpp"
#include "train/trainer.hpp"

namespace kiln::train {
namespace {

// Fields past `size` (from an older header) keep their zero defaults.
kiln_trainer_options read_options(const kiln_trainer_options& given) {
  KILN_CHECK(given.size > offsetof(kiln_trainer_options, model), Status::invalid_argument, "options->size is ",
             given.size, "; set it to sizeof(kiln_trainer_options)");
  kiln_trainer_options o{};
  std::memcpy(&o, &given, std::min(given.size, sizeof o));
  return o;
}

void check_required(const kiln_trainer_options& o) {
  KILN_CHECK(o.model, Status::invalid_argument, "options->model is NULL; the trainer needs a model");
  KILN_CHECK(o.optimizer, Status::invalid_argument, "options->optimizer is NULL; the trainer needs an optimizer");
  KILN_CHECK(o.train, Status::invalid_argument, "options->train is NULL; the trainer needs a train loader");
}

void check_counts(const kiln_trainer_options& o) {
  KILN_CHECK(o.epochs >= 0, Status::invalid_argument, "options->epochs is ", o.epochs, "; expected >= 0");
  KILN_CHECK(o.max_steps >= 0, Status::invalid_argument, "options->max_steps is ", o.max_steps,
             "; expected >= 0 (0: no limit but epochs)");
  KILN_CHECK(o.epochs > 0 || o.max_steps > 0, Status::invalid_argument,
             "options->epochs and options->max_steps are both 0; set at least one of them to say when training ends");
  KILN_CHECK(o.accumulate >= 0, Status::invalid_argument, "options->accumulate is ", o.accumulate,
             "; expected the number of micro-batches per step (>= 1, or 0 for 1)");
  KILN_CHECK(o.clip_grad_norm >= 0.0 && std::isfinite(o.clip_grad_norm), Status::invalid_argument,
             "options->clip_grad_norm is ", o.clip_grad_norm, "; expected a finite norm >= 0 (0: no clipping)");
  KILN_CHECK(o.eval_every >= 0, Status::invalid_argument, "options->eval_every is ", o.eval_every,
             "; expected >= 0 (0: after every epoch)");
  KILN_CHECK(o.log_every >= 0, Status::invalid_argument, "options->log_every is ", o.log_every,
             "; expected >= 0 (0: every 50 steps)");
  KILN_CHECK(o.checkpoint_every >= 0, Status::invalid_argument, "options->checkpoint_every is ", o.checkpoint_every,
             "; expected >= 0 (0: no checkpoints)");
  KILN_CHECK(o.checkpoint_every == 0 || (o.checkpoint_path && *o.checkpoint_path), Status::invalid_argument,
             "options->checkpoint_every is ", o.checkpoint_every,
             " but options->checkpoint_path is not set; say where the checkpoints go");
  KILN_CHECK(o.progress >= 0 && o.progress <= 3, Status::invalid_argument, "options->progress is ", o.progress,
             "; expected 0 (automatic), 1 (bar), 2 (lines) or 3 (quiet)");
}

void check_runtime(kiln_runtime* rt, const kiln_trainer_options& o) {
  KILN_CHECK(o.model->runtime == rt, Status::invalid_argument, "options->model belongs to another runtime than 'rt'");
  KILN_CHECK(o.optimizer->runtime == rt, Status::invalid_argument,
             "options->optimizer belongs to another runtime than 'rt'");
}

const kiln_op* find_op(kiln_runtime* rt, const char* name, const char* purpose) {
  const kiln_op* op = nullptr;
  check_call(kiln_op_find(rt, name, &op), purpose);
  return op;
}

TrainOps find_ops(kiln_runtime* rt, const std::string& loss_name) {
  TrainOps ops;
  ops.loss = find_op(rt, loss_name.c_str(), str_cat("options->loss '", loss_name, "'").c_str());
  const char* purpose = "the ops of gradient clipping";
  ops.mul = find_op(rt, "mul", purpose);
  ops.sum = find_op(rt, "sum", purpose);
  ops.norm = find_op(rt, "norm", purpose);
  ops.add = find_op(rt, "add", purpose);
  ops.sqrt = find_op(rt, "sqrt", purpose);
  ops.mul_scalar = find_op(rt, "mul_scalar", purpose);
  ops.cast = find_op(rt, "cast", "reading losses and outputs");
  return ops;
}

std::vector<TensorRef> model_parameters(kiln_module* model) {
  size_t count = 0;
  check_call(kiln_module_parameter_count(model, &count), "listing the model's parameters");
  std::vector<TensorRef> params;
  params.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    kiln_tensor* p = nullptr;
    check_call(kiln_module_parameter(model, i, &name, &p), "listing the model's parameters");
    params.push_back(TensorRef::adopt(p));
  }
  return params;
}

std::vector<double> group_learning_rates(kiln_optimizer* opt) {
  size_t groups = 0;
  check_call(kiln_optimizer_group_count(opt, &groups), "reading the optimizer's groups");
  std::vector<double> lrs(groups);
  for (size_t g = 0; g < groups; ++g)
    check_call(kiln_optimizer_get_hyper(opt, g, "lr", &lrs[g]), "reading the optimizer's learning rates");
  return lrs;
}

int64_t train_batches_per_epoch(kiln_loader* train) {
  int64_t examples = 0, batches = 0;
  check_call(kiln_loader_length(train, &examples, &batches), "reading the train loader's length");
  KILN_CHECK(batches > 0, Status::invalid_argument, "options->train gives no batch in an epoch (", examples,
             " examples); expected a loader with at least one batch");
  return batches;
}

// options->precision as the autocast dtype; KILN_F32 is none.
kiln_dtype precision_dtype(const char* precision) {
  if (!precision || std::strcmp(precision, "f32") == 0) return KILN_F32;
  if (std::strcmp(precision, "bf16") == 0) return KILN_BF16;
  if (std::strcmp(precision, "f16") == 0) return KILN_F16;
  throw_error(Status::invalid_argument,
              str_cat("options->precision is '", precision, "'; expected \"f32\" (or NULL), \"bf16\" or \"f16\""));
}

// options->loss_scaling and loss_scale_*: 0 takes the default; scaling is
// on by default for f16 alone, whose range is what it makes up for.
LossScaleConfig loss_scale_config(const kiln_trainer_options& o, kiln_dtype precision) {
  KILN_CHECK(o.loss_scaling >= 0 && o.loss_scaling <= 2, Status::invalid_argument, "options->loss_scaling is ",
             o.loss_scaling, "; expected 0 (on for precision \"f16\" only), 1 (on) or 2 (off)");
  LossScaleConfig c;
  c.enabled = o.loss_scaling == 1 || (o.loss_scaling == 0 && precision == KILN_F16);
  if (o.loss_scale_init != 0.0) c.initial = o.loss_scale_init;
  if (o.loss_scale_growth != 0.0) c.growth = o.loss_scale_growth;
  if (o.loss_scale_backoff != 0.0) c.backoff = o.loss_scale_backoff;
  if (o.loss_scale_interval != 0) c.interval = o.loss_scale_interval;
  if (o.loss_scale_min != 0.0) c.min = o.loss_scale_min;
  KILN_CHECK(c.initial > 0.0 && std::isfinite(c.initial), Status::invalid_argument, "options->loss_scale_init is ",
             c.initial, "; expected a finite scale > 0 (0: 65536)");
  KILN_CHECK(c.growth > 1.0 && std::isfinite(c.growth), Status::invalid_argument, "options->loss_scale_growth is ",
             c.growth, "; expected a finite factor > 1 (0: 2)");
  KILN_CHECK(c.backoff > 0.0 && c.backoff < 1.0, Status::invalid_argument, "options->loss_scale_backoff is ",
             c.backoff, "; expected a factor between 0 and 1 (0: 0.5)");
  KILN_CHECK(c.interval > 0, Status::invalid_argument, "options->loss_scale_interval is ", c.interval,
             "; expected a number of steps > 0 (0: 2000)");
  KILN_CHECK(c.min > 0.0 && c.min <= c.initial, Status::invalid_argument, "options->loss_scale_min is ", c.min,
             "; expected a scale > 0 and <= the initial scale ", c.initial, " (0: 1)");
  return c;
}

TrainerConfig make_config(kiln_runtime* rt, const kiln_trainer_options& o) {
  TrainerConfig c;
  c.runtime = RuntimeRef::retain(rt);
  c.model = ModuleRef::retain(o.model);
  c.optimizer = OptimizerRef::retain(o.optimizer);
  c.schedule = o.schedule;
  c.train = LoaderRef::retain(o.train);
  if (o.validation) c.validation = LoaderRef::retain(o.validation);
  c.strategy = o.strategy;
  c.loss_name = o.loss ? o.loss : "cross_entropy";
  c.epochs = o.epochs;
  c.max_steps = o.max_steps;
  c.accumulate = o.accumulate > 0 ? o.accumulate : 1;
  c.clip_grad_norm = o.clip_grad_norm;
  c.eval_every = o.eval_every;
  c.log_every = o.log_every > 0 ? o.log_every : 50;
  c.progress = o.progress;
  c.input_field = o.input_field ? o.input_field : "input";
  c.target_field = o.target_field ? o.target_field : "target";
  c.on_step = o.on_step;
  c.on_eval = o.on_eval;
  c.on_epoch = o.on_epoch;
  c.user_data = o.user_data;
  c.checkpoint_every = o.checkpoint_every;
  if (o.checkpoint_every > 0) c.checkpoint_path = o.checkpoint_path;
  c.precision = precision_dtype(o.precision);
  c.loss_scale = loss_scale_config(o, c.precision);
  KILN_CHECK(o.precision_fallback == 0 || o.precision_fallback == 1, Status::invalid_argument,
             "options->precision_fallback is ", o.precision_fallback,
             "; expected 0 (an unsupported precision is an error) or 1 (it falls back to f32 with a warning)");
  KILN_CHECK(o.report == 0 || o.report == 1, Status::invalid_argument, "options->report is ", o.report,
             "; expected 0 (no report printed) or 1 (printed when kiln_trainer_run ends)");
  c.print_report = o.report == 1;
  return c;
}

// Every rank must train its own shard for the same number of steps, or the
// collectives of the last steps would wait for a rank that has finished.
void check_train_shard(kiln_trainer& t) {
  const kiln::data::LoaderOptions& o = t.config.train->engine->options();
  KILN_CHECK(o.shard.world_size == t.world_size && o.shard.rank == t.rank, Status::invalid_argument,
             "options->train is sharded as rank ", o.shard.rank, " of ", o.shard.world_size,
             ", but the strategy runs rank ", t.rank, " of ", t.world_size,
             ": create the loader with rank = ", t.rank, " and world_size = ", t.world_size);
  const RankValue values[] = {{"batches per epoch", t.batches_per_epoch}, {"parameters", int64_t(t.params.size())}};
  check_ranks_agree(t.config.runtime.get(), "starting data-parallel training", values);
}

void attach_strategy(kiln_trainer& t) {
  kiln_strategy* s = t.config.strategy;
  check_call(kiln_strategy_rank(s, &t.rank, &t.world_size), "reading the strategy's rank");
  if (t.world_size > 1) check_train_shard(t);
  check_call(kiln_strategy_attach(s, t.config.model.get()), "attaching the strategy to the model");
}

ProgressPlan progress_plan(const kiln_trainer& t) {
  const TrainerConfig& c = t.config;
  ProgressPlan plan;
  plan.steps_per_epoch = t.steps_per_epoch;
  plan.epochs = c.epochs > 0 ? c.epochs : (c.max_steps + t.steps_per_epoch - 1) / t.steps_per_epoch;
  plan.total_steps = plan.epochs * t.steps_per_epoch;
  if (c.max_steps > 0) plan.total_steps = std::min(plan.total_steps, c.max_steps);
  plan.log_every = c.log_every;
  return plan;
}

}  // namespace

// A precision the model's device cannot compute in fails here, before any
// step, or (precision_fallback) turns into f32 with a warning.
void settle_precision(kiln_trainer& t, int fallback) {
  if (t.config.precision == KILN_F32) return;
  const DType dtype = abi::to_dtype(t.config.precision);
  const std::string missing = autocast_unsupported(model_device(t), dtype);
  if (missing.empty()) return;
  KILN_CHECK(fallback == 1, Status::unsupported, "options->precision is \"", dtype_name(dtype), "\", but ", missing,
             "; train in f32, or set options->precision_fallback = 1 to fall back to it with a warning");
  t.config.runtime.get()->log.write(KILN_LOG_WARNING, str_cat("options->precision \"", dtype_name(dtype),
                                                              "\" falls back to f32: ", missing));
  t.config.precision = KILN_F32;
}

std::unique_ptr<kiln_trainer> make_trainer(kiln_runtime* rt, const kiln_trainer_options& given) {
  const kiln_trainer_options o = read_options(given);
  check_required(o);
  check_counts(o);
  check_runtime(rt, o);
  auto t = std::make_unique<kiln_trainer>();
  t->config = make_config(rt, o);
  t->state.loss_scale = initial_loss_scale(t->config.loss_scale);
  t->ops = find_ops(rt, t->config.loss_name);
  t->params = model_parameters(o.model);
  settle_precision(*t, o.precision_fallback);
  t->base_lrs = group_learning_rates(o.optimizer);
  t->batches_per_epoch = train_batches_per_epoch(o.train);
  // A step takes its micro-batches from one epoch: the last one of an
  // epoch may have fewer than `accumulate`.
  t->steps_per_epoch = (t->batches_per_epoch + t->config.accumulate - 1) / t->config.accumulate;
  if (o.strategy) attach_strategy(*t);
  // Metrics and progress come from rank 0 alone; the others train quietly.
  const bool reports = t->rank == 0;
  t->metrics = std::make_unique<MetricsLog>(reports ? o.metrics_path : nullptr);
  const TensorBoardScalars optional{.loss_scale = t->config.loss_scale.enabled,
                                    .communication = t->config.strategy != nullptr,
                                    .peak_flops = reports && o.tensorboard_dir ? run_peak_flops(*t) : 0.0};
  t->tensorboard = std::make_unique<TensorBoardLog>(reports ? o.tensorboard_dir : nullptr, optional);
  t->progress = std::make_unique<Progress>(reports ? o.progress : kQuietProgress, progress_plan(*t));
  if (o.trace_path) {
    // 0: the second step, after the first has built the kernels.
    const int64_t first = o.trace_first_step != 0 ? o.trace_first_step : 2;
    // Made on every rank, so that each checks the range; only rank 0 traces.
    auto trace = std::make_unique<StepTrace>(rt->runtime.profiler(), o.trace_path, first,
                                             o.trace_last_step != 0 ? o.trace_last_step : first);
    if (reports) t->trace = std::move(trace);
  }
  return t;
}

}  // namespace kiln::train
