/*
 * kiln_training.h: the training half of kiln's C API: examples, data sources
 * and transforms, loaders, the trainer, checkpoints and parallel strategies.
 * kiln.h includes it; the ownership and threading rules at the top of kiln.h
 * hold here too.
 */
#ifndef KILN_KILN_TRAINING_H
#define KILN_KILN_TRAINING_H

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- data sources, examples and transforms ------------------------------------------------ */

/* An example: named CPU tensors ("input", "target", ...). */
KILN_API kiln_status kiln_example_create(kiln_runtime* rt, kiln_example** out);
KILN_API void kiln_example_release(kiln_example* ex);
/* Sets (or replaces) the field `name`; the example takes its own reference. */
KILN_API kiln_status kiln_example_set(kiln_example* ex, const char* name, kiln_tensor* t);
/* A new reference on the field `name`; KILN_ERR_NOT_FOUND when it has none. */
KILN_API kiln_status kiln_example_get(const kiln_example* ex, const char* name, kiln_tensor** out);
KILN_API kiln_status kiln_example_field_count(const kiln_example* ex, size_t* out);
/* *name is valid until the example changes or is released. */
KILN_API kiln_status kiln_example_field(const kiln_example* ex, size_t index, const char** name, kiln_tensor** out);

/* A data source of a registered type ("idx", "cifar10", "npy", "csv",
 * "tensors", "synthetic"); it reads or checks its files when created, so a
 * missing, truncated or malformed file fails here with the reason. */
KILN_API kiln_status kiln_data_source_create(kiln_runtime* rt, const char* type, const kiln_attr* config,
                                             size_t n_config, kiln_data_source** out);
KILN_API void kiln_data_source_release(kiln_data_source* src);
KILN_API kiln_status kiln_data_source_length(const kiln_data_source* src, int64_t* out);
/* Example `index` (0 <= index < length) as a new example. Safe to call from
 * several threads at once. */
KILN_API kiln_status kiln_data_source_get(const kiln_data_source* src, int64_t index, kiln_example** out);

/* A transform of a registered type ("to_float", "normalize", "random_crop",
 * "random_hflip", "one_hot"). */
KILN_API kiln_status kiln_transform_create(kiln_runtime* rt, const char* type, const kiln_attr* config,
                                           size_t n_config, kiln_transform** out);
KILN_API void kiln_transform_release(kiln_transform* tr);
/* Transforms `ex` in place. Random transforms draw from `seed` only, so an
 * example gets the same result for the same seed on any thread. */
KILN_API kiln_status kiln_transform_apply(const kiln_transform* tr, kiln_example* ex, uint64_t seed);

/* ---- loaders: the input pipeline ----------------------------------------------------- */

/* A loader turns a data source into batches: it orders the examples (a
 * seeded shuffle per epoch, or in order), keeps this process's shard, runs
 * the transforms on worker threads, stacks each field of `batch_size`
 * examples into one tensor ("input" f32[B, ...], "target" i64[B]) assembled
 * in place, and keeps up to
 * `prefetch` batches ready ahead of the training loop.
 *
 * Determinism: the batches of an epoch, and every random choice of the
 * transforms (each example is transformed with a seed made from the
 * loader's seed, the epoch and the example's index), depend only on the
 * options and the epoch, never on the number of workers or on timing. */

/* Set `size` to sizeof(kiln_loader_options); initialise by name. */
typedef struct kiln_loader_options {
  size_t size;
  int64_t batch_size; /* > 0 */
  int shuffle;        /* nonzero: a new seeded order every epoch */
  uint64_t seed;
  int drop_last;      /* nonzero: the last, smaller batch of an epoch is dropped */
  int rank;           /* this process's shard: examples i with i % world_size == rank of the */
  int world_size;     /* epoch's order (after shuffling); 0 or 1: no sharding */
  int num_workers;    /* threads running get + transforms; 0: on the calling thread */
  int prefetch;       /* batches made ahead; 0: 2 per worker (at least 2) */
  kiln_device_type device; /* where batches are delivered (copied on a side stream on CUDA) */
  int device_index;
} kiln_loader_options;

/* `transforms` (n_transforms, may be NULL when 0) run in order on each
 * example. The loader takes references on the source and the transforms. */
KILN_API kiln_status kiln_loader_create(kiln_data_source* source, kiln_transform* const* transforms,
                                        size_t n_transforms, const kiln_loader_options* options,
                                        kiln_loader** out);
/* Adds a reference (a trainer holding its loaders). NULL does nothing. */
KILN_API void kiln_loader_retain(kiln_loader* loader);
/* Drops a reference; the last one stops the workers (waiting for them) and
 * drops the loader. */
KILN_API void kiln_loader_release(kiln_loader* loader);

/* Examples and batches in one epoch of this shard. */
KILN_API kiln_status kiln_loader_length(const kiln_loader* loader, int64_t* num_examples, int64_t* num_batches);

/* Starts epoch `epoch` (0, 1, ...): abandons what is left of the current
 * one and begins making the new epoch's batches. */
KILN_API kiln_status kiln_loader_start_epoch(kiln_loader* loader, int64_t epoch);
/* The same, starting at batch `first_batch` of the epoch (0 <= first_batch
 * <= the number of batches): the batches before it are skipped without
 * being made, and the rest are exactly those an uninterrupted epoch would
 * deliver. A resumed run continues with it. */
KILN_API kiln_status kiln_loader_start_epoch_at(kiln_loader* loader, int64_t epoch, int64_t first_batch);

/* The next batch of the current epoch as a new example (its fields are the
 * stacked fields of the examples), or *out = NULL when the epoch is over.
 * Blocks until the batch is ready; the time spent waiting is measured. A
 * failure in a worker (a corrupt example, a failing transform) is returned
 * here with the example's index, and the epoch ends. */
KILN_API kiln_status kiln_loader_next(kiln_loader* loader, kiln_example** out);

/* Set `size` first; only fields within it are written. */
typedef struct kiln_loader_stats {
  size_t size;
  int64_t batches;            /* delivered since creation */
  double last_wait_seconds;   /* the last kiln_loader_next's wait for its batch */
  double total_wait_seconds;
  int64_t max_ready;          /* most batches ever waiting ready at once (<= prefetch) */
  /* A loader bound for a GPU: seconds the GPU's compute stream sat waiting
   * for input copies to arrive, over the batches measured so far (a batch
   * is measured once the work queued after its wait has run). Its copies
   * run on a stream of their own, so this stays near 0 while they keep up. */
  double device_wait_seconds;
} kiln_loader_stats;
KILN_API kiln_status kiln_loader_stats_get(const kiln_loader* loader, kiln_loader_stats* out);

/* ---- the trainer ----------------------------------------------------------------------- */

/* A training loop that runs in C++: forward, loss, backward (gradient
 * accumulation, clipping by norm, mixed precision with dynamic loss
 * scaling), the strategy's gradient reduction, the optimizer step and the
 * schedule, evaluation, progress output and metrics.
 * Hosts that own their loop call kiln_trainer_step; others call
 * kiln_trainer_run. */

/* What one optimizer step did. */
typedef struct kiln_step_metrics {
  size_t size;
  int64_t step;       /* optimizer steps taken, this one included (skipped ones count too) */
  int64_t epoch;      /* 0-based */
  int64_t epoch_step; /* steps taken in this epoch, this one included */
  int64_t samples;    /* examples in this step (over its accumulated micro-batches) */
  double loss;        /* mean loss of the step's micro-batches */
  double lr;          /* the first group's learning rate used by this step */
  double grad_norm;   /* total gradient norm before clipping (0 when not computed) */
  double step_seconds;
  double input_wait_seconds; /* the host waited for the loader's batches (taking them from it) */
  double samples_per_second; /* over the current epoch so far */
  /* Training on a GPU: seconds its compute stream waited for this step's
   * input copies (0 on the CPU). */
  double device_input_wait_seconds;
  /* Dynamic loss scaling (kiln_trainer_options.loss_scaling): the scale this
   * step's loss was multiplied by before backward (1 when scaling is off),
   * and 1 when the step was skipped because its gradients held inf or NaN
   * (parameters, optimizer state and schedule untouched), else 0. */
  double loss_scale;
  int skipped;
  /* The highest memory held by the CPU allocator during this step, and by
   * the GPU allocator when the model is on a GPU (0 on the CPU), in bytes;
   * each peak starts from what was held when the step began. */
  int64_t peak_cpu_bytes;
  int64_t peak_gpu_bytes;
  /* Where step_seconds went: with input_wait_seconds (the time spent taking
   * the step's batches from the loader) these five add up to step_seconds,
   * which is the step's wall time.
   *   forward:       the model and the loss, of every micro-batch
   *   backward:      backward of every micro-batch (with the strategy's
   *                  reductions that overlap it)
   *   communication: the strategy's gradient reduction after backward, what
   *                  of it did not overlap backward (0 without a strategy)
   *   optimizer:     unscaling, clipping, the schedule, the update and
   *                  clearing the gradients
   *   other:         the rest (starting an epoch, the step's bookkeeping)
   * On the CPU the phases are measured with the host's clock. On a GPU
   * each phase boundary also records a timing event on the GPU's compute
   * stream and the step ends by waiting for the last one: each phase is
   * then the GPU's time between its events (a phase whose kernels the host
   * queued quickly still gets the time they ran), and other_seconds also
   * holds the host's time outside the events (one synchronisation per
   * step). Host-to-device copies of the input run on a stream of their own
   * and overlap the phases; what the compute stream waited for them is
   * device_input_wait_seconds, inside the phase that waited. */
  double forward_seconds;
  double backward_seconds;
  double communication_seconds;
  double optimizer_seconds;
  double other_seconds;
  /* The arithmetic of the step's products and convolutions (matmul,
   * linear, conv2d and their backward), in floating-point operations (a
   * multiply-add is two), as the ops declare it: flops / step_seconds is
   * the step's achieved FLOP/s. Ops without a declared count add nothing. */
  double flops;
} kiln_step_metrics;

typedef struct kiln_eval_metrics {
  size_t size;
  int64_t step;
  int64_t epoch;
  int64_t samples;
  double loss;     /* mean over the samples */
  double accuracy; /* argmax over the last dim against an integer target; -1 when targets are not class indices */
  double seconds;
} kiln_eval_metrics;

/* Callbacks; a nonzero return stops training after the current step (the
 * trainer then returns KILN_OK). `metrics` is valid during the call.
 * A callback that fails reports it by recording an error with kiln_error_set
 * during the call and returning nonzero, best both at once:
 *   return kiln_error_set(KILN_ERR_IO, "cannot write the checkpoint");
 * The trainer clears this thread's last error before each call, stops, and
 * returns the status the callback returned with the message it recorded, as
 * they are. A callback that records an error but returns a value that is not
 * a kiln_status makes the trainer return KILN_ERR_INVALID_STATE ("stopped by
 * on_step, which returned ...", with the message). on_step runs after the
 * step's metrics line is written; after the epoch's last step, evaluation
 * (in kiln_trainer_run) and then on_epoch follow it. */
typedef int (*kiln_step_fn)(void* user_data, const kiln_step_metrics* metrics);
typedef int (*kiln_eval_fn)(void* user_data, const kiln_eval_metrics* metrics);
typedef int (*kiln_epoch_fn)(void* user_data, int64_t epoch, const kiln_step_metrics* last_step);

/* Set `size` to sizeof(kiln_trainer_options); initialise by name. */
typedef struct kiln_trainer_options {
  size_t size;
  kiln_module* model;          /* required */
  const char* loss;            /* an op taking (output, target): "cross_entropy" (default), "mse_loss", "nll_loss", "bce_with_logits" */
  kiln_optimizer* optimizer;   /* required */
  kiln_lr_schedule* schedule;  /* optional: the rate of every group is schedule(updates, group's base lr),
                                  updates counting the steps that updated the parameters (all of them
                                  unless loss scaling skipped some) */
  kiln_loader* train;          /* required */
  kiln_loader* validation;     /* optional */
  kiln_strategy* strategy;     /* optional: NULL is one process */
  int64_t epochs;              /* 0 with max_steps > 0: as many as max_steps needs */
  int64_t max_steps;           /* 0: no limit but epochs */
  int64_t accumulate;          /* micro-batches per optimizer step (default 1) */
  double clip_grad_norm;       /* > 0: clip the total gradient norm to it */
  int64_t eval_every;          /* steps between evaluations; 0: after every epoch */
  int64_t log_every;           /* steps between plain progress lines off a terminal (default 50) */
  int progress;                /* 0: a live bar on a terminal, plain lines otherwise; 1: the bar; 2: lines; 3: quiet */
  const char* metrics_path;    /* JSON lines of every step and evaluation; NULL: none. Written as the run goes. */
  const char* input_field;     /* default "input" */
  const char* target_field;    /* default "target" */
  kiln_step_fn on_step;
  kiln_eval_fn on_eval;
  kiln_epoch_fn on_epoch;
  void* user_data;
  int64_t checkpoint_every;    /* > 0: kiln_trainer_save(checkpoint_path) after every this many steps */
  const char* checkpoint_path; /* required when checkpoint_every > 0 */
  const char* precision;       /* NULL or "f32": full precision; "bf16" or "f16": the forward and the loss of
                                  every step and evaluation run under kiln_autocast_begin with that dtype
                                  (parameters, gradients and the optimizer stay f32) */
  /* Dynamic loss scaling, as PyTorch's GradScaler does it: the loss is
   * multiplied by the scale before backward, so that small f16 gradients do
   * not flush to zero; once per optimizer step (after every accumulated
   * micro-batch and the strategy's reduction) the gradients are divided by
   * it, before clipping and the optimizer, and checked. A step whose
   * gradients hold inf or NaN is skipped: parameters, optimizer state (step
   * counters too) and the schedule stay as they were, and the scale is
   * multiplied by loss_scale_backoff (never below loss_scale_min). After
   * loss_scale_interval clean steps in a row it is multiplied by
   * loss_scale_growth. A step that overflows at loss_scale_min ends
   * training with KILN_ERR_INVALID_STATE naming the step and the scale.
   * The scale and its count of clean steps are part of kiln_trainer_save's
   * state. Each value left 0 takes its default. */
  int loss_scaling;            /* 0: on when precision is "f16", off otherwise; 1: on; 2: off */
  double loss_scale_init;      /* the first scale (default 65536, 2^16) */
  double loss_scale_growth;    /* > 1 (default 2) */
  double loss_scale_backoff;   /* in (0, 1) (default 0.5) */
  int64_t loss_scale_interval; /* clean steps before the scale grows (default 2000) */
  double loss_scale_min;       /* > 0 and <= loss_scale_init (default 1) */
  /* A folder for TensorBoard (`tensorboard --logdir <folder>`); NULL: none.
   * It is made (with its parents) when the trainer is created, which fails
   * with KILN_ERR_IO naming it when it cannot be, and a new event file
   * (events.out.tfevents.<seconds>.<host>.<pid>.<n>) goes into it, written
   * by kiln in TensorBoard's record format. Every step adds the scalars
   * train/loss, train/lr, train/grad_norm, train/samples_per_second,
   * train/step_seconds, train/input_wait_seconds, train/flops_per_second
   * (achieved: kiln_step_metrics.flops / step_seconds) and
   * train/flop_utilisation (that over the device's peak, when known; on the
   * CPU measured when the trainer is created), the split of the step's
   * time (time/forward_seconds, time/backward_seconds,
   * time/optimizer_seconds, time/other_seconds, and
   * time/communication_seconds with a strategy) and memory/peak_cpu_bytes,
   * with memory/peak_gpu_bytes on a GPU and train/loss_scale when loss
   * scaling is on; every evaluation eval/loss and eval/accuracy (when the
   * targets are class indices). Each event is flushed as it is written. As
   * metrics_path, only rank 0 writes. */
  const char* tensorboard_dir;
  /* 1: print the training report (kiln_trainer_report) on stderr when
   * kiln_trainer_run ends, from rank 0; 0: not. */
  int report;
  /* A Chrome/Perfetto trace (JSON) of steps trace_first_step to
   * trace_last_step (counted from 1 as kiln_step_metrics.step; 0: the
   * second step alone), written to trace_path when the last of them ends
   * or, when training ends sooner, when kiln_trainer_run returns. The
   * runtime's profiler records those steps (starting it then while the
   * runtime is being profiled already fails with KILN_ERR_INVALID_STATE);
   * each step is a span "step N" over spans of its phases ("input wait",
   * "forward", "backward", "reduce gradients", "optimizer", "other") and the
   * op calls, on the training thread's track, beside the loader workers'
   * tracks ("loader worker", a span per batch made). Only rank 0 traces. A
   * first step < 1 or a last step before it fails at creation. */
  const char* trace_path;
  int64_t trace_first_step;
  int64_t trace_last_step;
  /* What a `precision` the model's device cannot compute in does (bf16 on
   * a CPU without oneDNN bf16 support, that is below AVX-512): 0 fails
   * kiln_trainer_create with KILN_ERR_UNSUPPORTED saying why; 1 trains in
   * f32 instead and writes a warning saying why on the runtime's log. */
  int precision_fallback;
} kiln_trainer_options;

/* With a strategy over several processes ("ddp"), the trainer attaches it
 * to the model (rank 0's parameters are broadcast), checks that the train
 * loader is this rank's shard (kiln_loader_options.rank and world_size as
 * the strategy's) and that every rank has as many batches per epoch; only
 * rank 0 prints progress and writes metrics_path and checkpoints. Each rank
 * evaluates its validation loader on its own.
 *
 * The trainer takes references on the objects in `options` that have a
 * retain function (the model, the optimizer, the loaders); the schedule and
 * the strategy, which have none, must outlive the trainer. A step takes
 * its micro-batches from one epoch: the last step of an epoch may have fewer
 * than `accumulate` (their losses are then averaged over those it has).
 * Gradients are reduced by the strategy before they are clipped, so that
 * every process clips the same gradient. */
KILN_API kiln_status kiln_trainer_create(kiln_runtime* rt, const kiln_trainer_options* options, kiln_trainer** out);
KILN_API void kiln_trainer_release(kiln_trainer* trainer);
/* One optimizer step (starting epochs as needed). *done = 1 when training
 * is over (epochs or max_steps reached, or a callback asked to stop); then
 * nothing was done. `metrics` may be NULL. */
KILN_API kiln_status kiln_trainer_step(kiln_trainer* trainer, kiln_step_metrics* metrics, int* done);
/* Steps until done, evaluating as configured. */
KILN_API kiln_status kiln_trainer_run(kiln_trainer* trainer);
/* The training report of the steps taken so far, the first left out (it
 * builds kernels and fills caches): the mean step time split into input
 * wait, forward, backward, communication (with a strategy over several
 * processes), optimizer and other (kiln_step_metrics); throughput;
 * achieved FLOP/s against the device's peak; the memory peak against what
 * the device can give; then advice, each line with the numbers behind it,
 * printed only when they hold:
 *   input          taking batches > 10% of the step: more loader workers
 *                  (or prefetch), or cheaper transforms when every thread
 *                  already is one
 *   memory         peak < 40% of the device's memory (a GPU, or a capped
 *                  CPU): the batch that would fill about 80% of it
 *   precision      f32 on a device that computes bf16 faster (tensor
 *                  cores; AMX): precision = "bf16"
 *   communication  the gradient reduction after backward > 10% of the
 *                  step: larger buckets, a larger batch per process
 *   ops            a per-op profile of a step shows most op time in calls
 *                  under 20 us: a larger batch
 * A CPU's peak is measured the first time a report is made (a few
 * milliseconds of FMA loops per thread). Writes the text as
 * kiln_profiler_report does: into `buffer` with its NUL, its length into
 * *length; either may be NULL to ask for the length alone. */
KILN_API kiln_status kiln_trainer_report(kiln_trainer* trainer, char* buffer, size_t capacity, size_t* length);
/* One pass over the validation loader (or `loader` when not NULL) in eval
 * mode without gradients; the model's mode is restored afterwards. */
KILN_API kiln_status kiln_trainer_evaluate(kiln_trainer* trainer, kiln_loader* loader, kiln_eval_metrics* out);
/* One evaluation pass of `model` over `loader` without a trainer, as
 * kiln_trainer_evaluate does it: the model reads the batch field
 * `input_field` (NULL: "input"), the loss op `loss` (NULL: "cross_entropy")
 * takes (output, field `target_field` (NULL: "target")); step and epoch
 * are 0, and nothing is logged. */
KILN_API kiln_status kiln_evaluate(kiln_module* model, kiln_loader* loader, const char* loss, const char* input_field,
                                   const char* target_field, kiln_eval_metrics* out);

/* ---- checkpoints ----------------------------------------------------------------------- */

/* Checkpoints are safetensors files: a little-endian u64 header length, a
 * JSON header naming each tensor's dtype, shape and byte range, then the
 * tensors' bytes. Nothing in them is ever executed. Every file is written
 * atomically: into a temporary file beside `path`, flushed to disk, renamed
 * over `path`, then the directory is flushed. A failed save (a read-only
 * or full location, a process killed midway) leaves whatever was at `path`
 * before untouched and reports the error; no partial file ever takes the
 * final name.
 *
 * Reading validates the whole header before anything is read or changed:
 * a truncated file, a header length beyond the file, a header that is not
 * JSON or not a safetensors header, an unknown dtype, a shape whose size
 * overflows, byte ranges that do not match the shape, overlap, leave gaps
 * or stop short of the end of the file, and a name given twice each fail
 * with KILN_ERR_IO and a message saying which. Nothing larger than the file
 * is ever allocated. */

/* Writes the fields of `tensors` (any device; copied to the host as needed)
 * under their names. */
KILN_API kiln_status kiln_safetensors_save(const kiln_example* tensors, const char* path);
/* Reads every tensor of a safetensors file into a new example (CPU tensors,
 * fields in the file's order). */
KILN_API kiln_status kiln_safetensors_load(kiln_runtime* rt, const char* path, kiln_example** out);

/* Weights: the parameters and buffers of `model` under their dotted names,
 * the names PyTorch's state_dict gives the same model ("0.weight",
 * "conv1.bias", "1.running_mean"), each in its own dtype. */
KILN_API kiln_status kiln_weights_save(kiln_module* model, const char* path);
/* Loads a weights file into `model`: each parameter and buffer takes the
 * tensor of its name, converted to its dtype and copied to its device.
 * Shapes must match. strict != 0: the file must hold exactly the model's
 * names (PyTorch's strict=True); otherwise names only one side has are
 * skipped. The names that do not match are listed in the error. All or
 * nothing: on any error the model is unchanged. */
KILN_API kiln_status kiln_weights_load(kiln_module* model, const char* path, int strict);

/* The full training state of `trainer`, enough to continue exactly where it
 * stands: the model's parameters and buffers (named "model.<name>"), the
 * optimizer's state ("optimizer.<entry>", see kiln_optimizer_state_get),
 * each group's learning rate, the step, the epoch and the position in it
 * (the train loader resumes at the next batch), the count of updates the
 * schedule follows, the loss scale and its count of clean steps (when loss
 * scaling is on), the runtime's random stream, and a manifest of the kiln version and of every loaded plugin's
 * name and version. On the CPU, a run that saves, restarts and loads takes
 * the same steps with bit-identical losses and parameters as one that never
 * stopped. */
/* With a strategy over several processes, every rank calls it: the ranks
 * first check that they agree on the step, epoch and batch (a rank that
 * disagrees fails it, named in the error, on every rank), then rank 0
 * alone writes the file. Under a strategy that shards the optimizer's
 * state ("zero1") rank 0 first receives each parameter's state from its
 * owner, so the file is the one a single process writes. */
KILN_API kiln_status kiln_trainer_save(kiln_trainer* trainer, const char* path);
/* Restores a state written by kiln_trainer_save into a trainer made with
 * the same model structure, optimizer and loaders. A path that does not
 * exist is an error (never a silent fresh start); a file that is not a
 * training state, or whose tensors do not fit the model or the optimizer,
 * fails naming what differs, and leaves the trainer, the model and the
 * optimizer unchanged. Plugins named in the manifest that are missing or
 * of another version are reported as warnings on the log. Under a strategy
 * that shards the optimizer's state, each rank loads the state of the
 * parameters it owns only, whatever the number of ranks that saved it. */
KILN_API kiln_status kiln_trainer_load(kiln_trainer* trainer, const char* path);

/* ---- memory planning ------------------------------------------------------------------- */

/* Both calls below run trial steps of `model` on zero-filled batches of
 * inputs shaped [batch, input_shape...] (f32, on the device of the model's
 * parameters): forward, the loss against zero targets (class 0 for
 * "cross_entropy" and "nll_loss", zeros shaped like the output otherwise)
 * and backward, in the model's current train/eval mode, with the state
 * `optimizer` would make for its parameters held alongside. A trial
 * changes nothing: the parameters' gradients are put back as they were,
 * the random stream is left where it was, and every byte it took is
 * returned before the next. Set `size` to sizeof(kiln_memory_plan_options);
 * the options may be NULL (all defaults). */
typedef struct kiln_memory_plan_options {
  size_t size;
  const char* loss;          /* the loss op; NULL: "cross_entropy" */
  kiln_optimizer* optimizer; /* NULL: no optimizer state */
  const char* precision;     /* NULL or "f32"; "bf16" or "f16": forward and loss under autocast */
  /* kiln_find_batch_size: a batch whose trial holds more than this at its
   * peak (parameters included) does not fit; 0: only running out of memory
   * (a GPU's size or cap, the CPU cap of kiln_memory_set_limit) decides. */
  int64_t limit_bytes;
  int64_t max_batch_size; /* kiln_find_batch_size: the largest batch tried; 0: 65536 */
} kiln_memory_plan_options;

/* What training `model` at one batch size holds, in bytes. Set `size` first. */
typedef struct kiln_memory_estimate {
  size_t size;
  int64_t parameter_bytes; /* every parameter */
  int64_t buffer_bytes;    /* buffers (BatchNorm's running statistics) */
  int64_t gradient_bytes;  /* the gradients backward gives the parameters */
  int64_t optimizer_bytes; /* the optimizer's state: what its type makes per parameter (SGD one tensor like
                              the parameter, its momentum buffer; Adam and AdamW two; ...); 0 without one */
  /* The rest of the trial's peak above what it started with: the values the
   * forward keeps for backward and the temporaries of backward. */
  int64_t activation_bytes;
  int64_t total_bytes; /* the sum of the above */
} kiln_memory_estimate;

/* Estimates the memory of training `model` at `batch_size` from one trial
 * step at that size (see above). Running out of memory in the trial is
 * KILN_ERR_OUT_OF_MEMORY with the allocator's message. */
KILN_API kiln_status kiln_memory_estimate_get(kiln_module* model, const int64_t* input_shape, int input_rank,
                                              int64_t batch_size, const kiln_memory_plan_options* options,
                                              kiln_memory_estimate* out);

/* Set `size` first. */
typedef struct kiln_batch_size_result {
  size_t size;
  int64_t batch_size; /* the largest batch that fits */
  int64_t peak_bytes; /* its trial's peak on the model's device */
  int64_t tries;      /* trial steps run */
} kiln_batch_size_result;

/* The largest batch size whose trial step fits (see above): batch sizes 1,
 * 2, 4, ... are tried until one runs out of memory or goes over
 * options->limit_bytes (or max_batch_size is reached), then a binary search
 * between the last that fit and the first that did not. Running out of
 * memory during a try is caught and cleaned up; only when even a batch of 1
 * does not fit is it KILN_ERR_OUT_OF_MEMORY, with the reason. */
KILN_API kiln_status kiln_find_batch_size(kiln_module* model, const int64_t* input_shape, int input_rank,
                                          const kiln_memory_plan_options* options, kiln_batch_size_result* out);

/* ---- parallel strategies ---------------------------------------------------------------- */

/* A strategy of a registered type: "single" (one process, nothing to do),
 * "ddp" (data parallel over the runtime's default process group, see
 * kiln_dist.h: every rank trains a whole copy of the model on its shard of
 * the data, and gradients are averaged in buckets while backward runs) or
 * "zero1" (ddp with the optimizer's state sharded: the parameters are
 * shared out over the ranks, each rank keeps the optimizer state of its
 * share only and updates it, then every rank receives the others'). */
KILN_API kiln_status kiln_strategy_create(kiln_runtime* rt, const char* type, const kiln_attr* config,
                                          size_t n_config, kiln_strategy** out);
KILN_API void kiln_strategy_release(kiln_strategy* s);
KILN_API kiln_status kiln_strategy_rank(const kiln_strategy* s, int* rank, int* world_size);
/* Called once before training `model` with the strategy: the processes'
 * parameters and buffers are made to agree (rank 0's are broadcast by
 * "ddp") and gradient-ready hooks are set, so that reduction overlaps
 * backward. A strategy without this step does nothing. */
KILN_API kiln_status kiln_strategy_attach(kiln_strategy* s, kiln_module* model);
/* Called before each micro-batch's backward: `sync` is 1 when the
 * gradients will be reduced after it (the last micro-batch before an
 * optimizer step), 0 when they only accumulate. */
KILN_API kiln_status kiln_strategy_backward_begin(kiln_strategy* s, int sync);
/* Called after backward and before the optimizer step: makes the
 * gradients of `params` agree across the processes of the strategy. */
KILN_API kiln_status kiln_strategy_reduce_gradients(kiln_strategy* s, kiln_tensor* const* params, size_t n_params);
/* The optimizer step under the strategy, in place of kiln_optimizer_step
 * once the gradients are reduced (and clipped). "zero1" updates this
 * rank's share of the parameters (the others' gradients are dropped
 * first, so the optimizer makes no state for them) and then gives every
 * rank the updated parameters of the others; every rank calls it. Other
 * strategies just step. */
KILN_API kiln_status kiln_strategy_optimizer_step(kiln_strategy* s, kiln_optimizer* opt);
/* *owner = the rank that keeps `param`'s optimizer state ("zero1"), or -1
 * when every rank keeps it (every other strategy, and a tensor that is not
 * a parameter of the model the strategy was attached to). */
KILN_API kiln_status kiln_strategy_state_owner(const kiln_strategy* s, const kiln_tensor* param, int* owner);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_TRAINING_H */
