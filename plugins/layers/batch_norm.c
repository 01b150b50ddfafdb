/* BatchNorm1d and BatchNorm2d(num_features, eps = 1e-5, momentum = 0.1,
 * affine = true, track_running_stats = true), PyTorch's semantics: train
 * mode normalises with the batch's statistics and moves running_mean and
 * running_var (unbiased) towards them by `momentum`, counting batches in
 * num_batches_tracked; eval mode uses the running statistics (or the
 * batch's when they are not tracked). Inputs: [N, C] or [N, C, L] for
 * BatchNorm1d, [N, C, H, W] for BatchNorm2d. */
#include <stdlib.h>

#include "config.h"
#include "host.h"
#include "init.h"
#include "layers.h"
#include "scratch.h"

enum { NUM_FEATURES, EPS, MOMENTUM, AFFINE, TRACK_RUNNING_STATS, N_CONFIG };

static const kiln_attr_spec config[N_CONFIG] = {
    [NUM_FEATURES] = {{"num_features", KILN_ATTR_INT, {.i = 0}}, 1, "channels C of the input"},
    [EPS] = {{"eps", KILN_ATTR_FLOAT, {.f = 1e-5}}, 0, "added to the variance for stability"},
    [MOMENTUM] = {{"momentum", KILN_ATTR_FLOAT, {.f = 0.1}}, 0, "weight of each batch in the running statistics"},
    [AFFINE] = {{"affine", KILN_ATTR_BOOL, {.b = 1}}, 0, "learn a per-channel weight (1) and bias (0)"},
    [TRACK_RUNNING_STATS] = {{"track_running_stats", KILN_ATTR_BOOL, {.b = 1}},
                             0,
                             "keep running_mean, running_var and num_batches_tracked for eval mode"},
};

/* What tells BatchNorm1d from BatchNorm2d: the input ranks it takes. */
typedef struct batch_norm_kind {
  const char* layer;
  int min_rank, max_rank;
  const char* shapes;
} batch_norm_kind;

static const batch_norm_kind kinds[] = {
    {"BatchNorm1d", 2, 3, "[N, C] or [N, C, L]"},
    {"BatchNorm2d", 4, 4, "[N, C, H, W]"},
};

typedef struct batch_norm_state {
  const batch_norm_kind* kind;
  const kiln_op* batch_norm;
  int64_t num_features;
  double eps, momentum;
  kiln_tensor *weight, *bias;                                   /* NULL unless affine */
  kiln_tensor *running_mean, *running_var, *num_batches_tracked; /* NULL unless tracked */
} batch_norm_state;

static void batch_norm_destroy(void* state) {
  batch_norm_state* s = state;
  kl_host.tensor_release(s->weight);
  kl_host.tensor_release(s->bias);
  kl_host.tensor_release(s->running_mean);
  kl_host.tensor_release(s->running_var);
  kl_host.tensor_release(s->num_batches_tracked);
  free(s);
}

static kiln_status batch_norm_create(void* user, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config,
                                     void** state) {
  const batch_norm_kind* kind = user;
  const int64_t* c = &cfg[NUM_FEATURES].value.i;
  batch_norm_state* s;
  kiln_status st;
  (void)n_config;
  if ((st = kl_check_int_min(kind->layer, &cfg[NUM_FEATURES], 1)) != KILN_OK) return st;
  if ((st = kl_check_float_range(kind->layer, &cfg[EPS], 0.0, 1.0, 0)) != KILN_OK) return st;
  if ((st = kl_check_float_range(kind->layer, &cfg[MOMENTUM], 0.0, 1.0, 0)) != KILN_OK) return st;
  s = calloc(1, sizeof *s);
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "%s: no memory for its state", kind->layer);
  s->kind = kind;
  s->num_features = *c;
  s->eps = cfg[EPS].value.f;
  s->momentum = cfg[MOMENTUM].value.f;
  st = kl_host.op_find(kl_host.layer_init_runtime(init), "batch_norm", &s->batch_norm);
  if (st == KILN_OK && cfg[AFFINE].value.b) {
    st = kl_add_parameter(init, "weight", KL_INIT_ONES, c, 1, 0, 0, &s->weight);
    if (st == KILN_OK) st = kl_add_parameter(init, "bias", KL_INIT_ZEROS, c, 1, 0, 0, &s->bias);
  }
  if (st == KILN_OK && cfg[TRACK_RUNNING_STATS].value.b) {
    st = kl_add_buffer(init, "running_mean", 0.0, KILN_F32, c, 1, &s->running_mean);
    if (st == KILN_OK) st = kl_add_buffer(init, "running_var", 1.0, KILN_F32, c, 1, &s->running_var);
    if (st == KILN_OK) st = kl_add_buffer(init, "num_batches_tracked", 0.0, KILN_I64, NULL, 0, &s->num_batches_tracked);
  }
  if (st != KILN_OK) {
    batch_norm_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

static kiln_status check_input(const batch_norm_state* s, const kiln_tensor* x) {
  return kl_expect_channels(s->kind->layer, x, s->kind->min_rank, s->kind->max_rank, s->kind->shapes, "num_features",
                            s->num_features);
}

/* num_batches_tracked += 1, outside of any gradient. */
static kiln_status count_batch(kiln_runtime* rt, kiln_tensor* counter) {
  int64_t n = 0;
  kiln_tensor* next = NULL;
  kiln_status st = kl_host.tensor_read(counter, &n, sizeof n);
  if (st == KILN_OK) st = kl_host.tensor_full(rt, NULL, 0, (double)(n + 1), KILN_I64, KILN_DEVICE_CPU, 0, &next);
  if (st == KILN_OK) st = kl_host.tensor_assign(counter, next);
  kl_host.tensor_release(next);
  return st;
}

static kiln_status batch_norm_forward(void* state, const kiln_layer_call* call) {
  const batch_norm_state* s = state;
  const int tracked = s->running_mean != NULL;
  /* Batch statistics in train mode, and in eval mode without running ones. */
  const int batch_statistics = call->training || !tracked;
  const int update_running = call->training && tracked;
  kiln_tensor* inputs[5];
  kiln_attr attrs[3];
  kiln_status st = kl_expect_inputs(s->kind->layer, call, 1);
  if (st == KILN_OK) st = check_input(s, call->inputs[0]);
  if (st != KILN_OK) return st;
  inputs[0] = call->inputs[0];
  inputs[1] = s->weight;
  inputs[2] = s->bias;
  inputs[3] = s->running_mean;
  inputs[4] = s->running_var;
  attrs[0] = kiln_attr_bool("training", batch_statistics);
  attrs[1] = kiln_attr_float("momentum", s->momentum);
  attrs[2] = kiln_attr_float("eps", s->eps);
  st = kl_host.op_call1(call->runtime, s->batch_norm, inputs, 5, attrs, 3, &call->outputs[0]);
  if (st == KILN_OK && update_running) {
    st = count_batch(call->runtime, s->num_batches_tracked);
    if (st != KILN_OK) {
      kl_host.tensor_release(call->outputs[0]);
      call->outputs[0] = NULL;
    }
  }
  return st;
}

kiln_status kl_register_batch_norm(kiln_registrar* registrar) {
  size_t i;
  for (i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                            .config = config,
                            .n_config = N_CONFIG,
                            .create = batch_norm_create,
                            .forward = batch_norm_forward,
                            .destroy = batch_norm_destroy};
    kiln_status st;
    type.name = kinds[i].layer;
    type.user = (void*)&kinds[i];
    if ((st = kl_host.register_layer(registrar, &type)) != KILN_OK) return st;
  }
  return KILN_OK;
}
