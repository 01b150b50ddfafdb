#include "checkpoint_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static kiln_module* layer(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n) {
  kiln_module* m = NULL;
  REQUIRE_OK(kiln_module_create(rt, type, config, n, &m));
  return m;
}

static void append(kiln_module* seq, const char* name, kiln_module* child) {
  REQUIRE_OK(kiln_sequential_append(seq, name, child));
  kiln_module_release(child);
}

static kiln_module* make_mlp(kiln_runtime* rt, int64_t hidden) {
  const kiln_attr fc1[2] = {kiln_attr_int("in_features", 2), kiln_attr_int("out_features", hidden)};
  const kiln_attr bn[1] = {kiln_attr_int("num_features", hidden)};
  const kiln_attr drop[1] = {kiln_attr_float("p", 0.3)};
  const kiln_attr fc2[2] = {kiln_attr_int("in_features", hidden), kiln_attr_int("out_features", 2)};
  kiln_module* seq = NULL;
  REQUIRE_OK(kiln_sequential_create(rt, &seq));
  append(seq, "fc1", layer(rt, "Linear", fc1, 2));
  append(seq, "bn", layer(rt, "BatchNorm1d", bn, 1));
  append(seq, "relu", layer(rt, "ReLU", NULL, 0));
  append(seq, "drop", layer(rt, "Dropout", drop, 1));
  append(seq, "fc2", layer(rt, "Linear", fc2, 2));
  return seq;
}

static kiln_optimizer* make_adam(kiln_runtime* rt, kiln_module* model) {
  kiln_tensor* params[8];
  const kiln_attr hyper[2] = {kiln_attr_float("lr", 0.05), kiln_attr_float("weight_decay", 0.01)};
  kiln_optimizer* opt = NULL;
  const char* name = NULL;
  size_t n = 0, i;
  REQUIRE_OK(kiln_module_parameter_count(model, &n));
  for (i = 0; i < n; ++i) REQUIRE_OK(kiln_module_parameter(model, i, &name, &params[i]));
  REQUIRE_OK(kiln_optimizer_create(rt, "AdamW", params, n, hyper, 2, &opt));
  for (i = 0; i < n; ++i) kiln_tensor_release(params[i]);
  return opt;
}

static kiln_loader* make_worker_loader(const blobs* b) {
  kiln_loader_options o;
  kiln_loader* loader = NULL;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.batch_size = RUN_BATCH;
  o.shuffle = 1;
  o.seed = 11;
  o.num_workers = 2;
  o.device = KILN_DEVICE_CPU;
  REQUIRE_OK(kiln_loader_create(b->source, NULL, 0, &o, &loader));
  return loader;
}

static void open_with(training_run* r, kiln_runtime* rt, int64_t max_steps, const char* checkpoint_path,
                      int64_t checkpoint_every, int64_t hidden);

void run_open(training_run* r, uint64_t seed, int64_t max_steps, const char* checkpoint_path,
              int64_t checkpoint_every) {
  run_open_wide(r, seed, max_steps, checkpoint_path, checkpoint_every, RUN_HIDDEN);
}

void run_open_in(training_run* r, kiln_runtime* rt, int64_t max_steps) {
  open_with(r, rt, max_steps, NULL, 0, RUN_HIDDEN);
}

void run_open_wide(training_run* r, uint64_t seed, int64_t max_steps, const char* checkpoint_path,
                   int64_t checkpoint_every, int64_t hidden) {
  open_with(r, open_runtime(seed), max_steps, checkpoint_path, checkpoint_every, hidden);
}

static void open_with(training_run* r, kiln_runtime* rt, int64_t max_steps, const char* checkpoint_path,
                      int64_t checkpoint_every, int64_t hidden) {
  const kiln_attr schedule[2] = {kiln_attr_int("warmup_steps", 3), kiln_attr_int("total_steps", 30)};
  kiln_trainer_options o;
  memset(r, 0, sizeof *r);
  r->rt = rt;
  blobs_make(r->rt, RUN_EXAMPLES, 5, &r->data);
  r->loader = make_worker_loader(&r->data);
  r->model = make_mlp(r->rt, hidden);
  r->opt = make_adam(r->rt, r->model);
  REQUIRE_OK(kiln_lr_schedule_create(r->rt, "warmup_cosine", schedule, 2, &r->schedule));
  o = trainer_options(r->model, r->opt, r->loader);
  o.epochs = 0;
  o.max_steps = max_steps;
  o.schedule = r->schedule;
  o.checkpoint_every = checkpoint_every;
  o.checkpoint_path = checkpoint_path;
  REQUIRE_OK(kiln_trainer_create(r->rt, &o, &r->trainer));
}

void run_close(training_run* r) {
  kiln_trainer_release(r->trainer);
  kiln_lr_schedule_release(r->schedule);
  kiln_optimizer_release(r->opt);
  kiln_module_release(r->model);
  kiln_loader_release(r->loader);
  blobs_free(&r->data);
  kiln_runtime_release(r->rt);
  memset(r, 0, sizeof *r);
}

double run_step(training_run* r) {
  kiln_step_metrics m;
  int done = 0;
  memset(&m, 0, sizeof m);
  m.size = sizeof m;
  REQUIRE_OK(kiln_trainer_step(r->trainer, &m, &done));
  if (done) {
    fprintf(stderr, "run_step: training is already over\n");
    exit(1);
  }
  return m.loss;
}

static size_t append_bytes(kiln_tensor* t, unsigned char* out, size_t used, size_t capacity) {
  int64_t numel = 0;
  kiln_dtype dtype;
  size_t nbytes;
  REQUIRE_OK(kiln_tensor_numel(t, &numel));
  REQUIRE_OK(kiln_tensor_dtype(t, &dtype));
  nbytes = (size_t)numel * (dtype == KILN_I64 || dtype == KILN_F64 ? 8 : 4);
  if (used + nbytes > capacity) {
    fprintf(stderr, "run_model_bytes: more than %zu bytes\n", capacity);
    exit(1);
  }
  REQUIRE_OK(kiln_tensor_read(t, out + used, nbytes));
  kiln_tensor_release(t);
  return used + nbytes;
}

size_t run_model_bytes(training_run* r, unsigned char* out, size_t capacity) {
  size_t n = 0, i, used = 0;
  const char* name = NULL;
  kiln_tensor* t = NULL;
  REQUIRE_OK(kiln_module_parameter_count(r->model, &n));
  for (i = 0; i < n; ++i) {
    REQUIRE_OK(kiln_module_parameter(r->model, i, &name, &t));
    used = append_bytes(t, out, used, capacity);
  }
  REQUIRE_OK(kiln_module_buffer_count(r->model, &n));
  for (i = 0; i < n; ++i) {
    REQUIRE_OK(kiln_module_buffer(r->model, i, &name, &t));
    used = append_bytes(t, out, used, capacity);
  }
  return used;
}

const char* scratch_path(const char* name) {
  static char path[1024];
  mkdir(KILN_CHECKPOINT_TEST_DIR, 0755);
  snprintf(path, sizeof path, "%s/%s", KILN_CHECKPOINT_TEST_DIR, name);
  return path;
}
