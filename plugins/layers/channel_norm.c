/* GroupNorm(num_groups, num_channels, eps = 1e-5, affine = true) and
 * InstanceNorm2d(num_features, eps = 1e-5, affine = false), PyTorch's
 * semantics (InstanceNorm2d without running statistics): each sample's
 * group of channels, or each sample's channel, normalised by its own mean
 * and (biased) variance, then every channel scaled by weight (1 at first)
 * and shifted by bias (0 at first) when affine. One op call each:
 * group_norm, instance_norm. */
#include <stdlib.h>

#include "config.h"
#include "host.h"
#include "init.h"
#include "layers.h"

enum { GN_NUM_GROUPS, GN_NUM_CHANNELS, GN_EPS, GN_AFFINE, GN_N_CONFIG };

static const kiln_attr_spec group_norm_config[GN_N_CONFIG] = {
    [GN_NUM_GROUPS] = {{"num_groups", KILN_ATTR_INT, {.i = 0}}, 1, "groups the channels are split into"},
    [GN_NUM_CHANNELS] = {{"num_channels", KILN_ATTR_INT, {.i = 0}},
                         1,
                         "channels C of the input, a multiple of num_groups"},
    [GN_EPS] = {{"eps", KILN_ATTR_FLOAT, {.f = 1e-5}}, 0, "added to the variance for stability"},
    [GN_AFFINE] = {{"affine", KILN_ATTR_BOOL, {.b = 1}}, 0, "learn a per-channel weight (1) and bias (0)"},
};

enum { IN_NUM_FEATURES, IN_EPS, IN_AFFINE, IN_N_CONFIG };

static const kiln_attr_spec instance_norm_config[IN_N_CONFIG] = {
    [IN_NUM_FEATURES] = {{"num_features", KILN_ATTR_INT, {.i = 0}}, 1, "channels C of the input"},
    [IN_EPS] = {{"eps", KILN_ATTR_FLOAT, {.f = 1e-5}}, 0, "added to the variance for stability"},
    [IN_AFFINE] = {{"affine", KILN_ATTR_BOOL, {.b = 0}}, 0, "learn a per-channel weight (1) and bias (0)"},
};

/* What tells the two apart: the op, the input ranks, where the entries sit. */
typedef struct channel_norm_kind {
  const char* layer;
  const char* op;
  int min_rank, max_rank;
  const char* shapes;
  const char* channels_name;
  int channels_entry, eps_entry, affine_entry;
} channel_norm_kind;

static const channel_norm_kind group_norm_kind = {"GroupNorm", "group_norm", 2, KILN_MAX_DIMS, "[N, C, ...]",
                                                  "num_channels", GN_NUM_CHANNELS, GN_EPS, GN_AFFINE};
static const channel_norm_kind instance_norm_kind = {"InstanceNorm2d", "instance_norm", 4, 4, "[N, C, H, W]",
                                                     "num_features", IN_NUM_FEATURES, IN_EPS, IN_AFFINE};

typedef struct channel_norm_state {
  const channel_norm_kind* kind;
  const kiln_op* op;
  int64_t channels;
  kiln_attr attrs[2]; /* group_norm: num_groups, eps; instance_norm: eps */
  size_t n_attrs;
  kiln_tensor *weight, *bias; /* NULL unless affine */
} channel_norm_state;

static void channel_norm_destroy(void* state) {
  channel_norm_state* s = state;
  kl_host.tensor_release(s->weight);
  kl_host.tensor_release(s->bias);
  free(s);
}

static kiln_status check_config(const channel_norm_kind* kind, const kiln_attr* cfg) {
  kiln_status st = kl_check_int_min(kind->layer, &cfg[kind->channels_entry], 1);
  if (st == KILN_OK) st = kl_check_float_range(kind->layer, &cfg[kind->eps_entry], 0.0, 1.0, 0);
  if (st != KILN_OK || kind != &group_norm_kind) return st;
  if ((st = kl_check_int_min(kind->layer, &cfg[GN_NUM_GROUPS], 1)) != KILN_OK) return st;
  return kl_check_divisible(kind->layer, &cfg[GN_NUM_CHANNELS], &cfg[GN_NUM_GROUPS]);
}

static kiln_status channel_norm_create(void* user, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config,
                                       void** state) {
  const channel_norm_kind* kind = user;
  channel_norm_state* s;
  kiln_status st;
  (void)n_config;
  if ((st = check_config(kind, cfg)) != KILN_OK) return st;
  s = calloc(1, sizeof *s);
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "%s: no memory for its state", kind->layer);
  s->kind = kind;
  s->channels = cfg[kind->channels_entry].value.i;
  if (kind == &group_norm_kind) s->attrs[s->n_attrs++] = kiln_attr_int("num_groups", cfg[GN_NUM_GROUPS].value.i);
  s->attrs[s->n_attrs++] = kiln_attr_float("eps", cfg[kind->eps_entry].value.f);
  st = kl_host.op_find(kl_host.layer_init_runtime(init), kind->op, &s->op);
  if (st == KILN_OK && cfg[kind->affine_entry].value.b) {
    st = kl_add_parameter(init, "weight", KL_INIT_ONES, &s->channels, 1, 0, 0, &s->weight);
    if (st == KILN_OK) st = kl_add_parameter(init, "bias", KL_INIT_ZEROS, &s->channels, 1, 0, 0, &s->bias);
  }
  if (st != KILN_OK) {
    channel_norm_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

static kiln_status check_input(const channel_norm_state* s, const kiln_tensor* x) {
  return kl_expect_channels(s->kind->layer, x, s->kind->min_rank, s->kind->max_rank, s->kind->shapes, s->kind->channels_name,
                            s->channels);
}

static kiln_status channel_norm_forward(void* state, const kiln_layer_call* call) {
  const channel_norm_state* s = state;
  kiln_tensor* inputs[3];
  kiln_status st = kl_expect_inputs(s->kind->layer, call, 1);
  if (st == KILN_OK) st = check_input(s, call->inputs[0]);
  if (st != KILN_OK) return st;
  inputs[0] = call->inputs[0];
  inputs[1] = s->weight;
  inputs[2] = s->bias;
  return kl_host.op_call1(call->runtime, s->op, inputs, 3, s->attrs, s->n_attrs, &call->outputs[0]);
}

kiln_status kl_register_channel_norm(kiln_registrar* registrar) {
  const channel_norm_kind* kinds[2] = {&group_norm_kind, &instance_norm_kind};
  const kiln_attr_spec* configs[2] = {group_norm_config, instance_norm_config};
  const size_t n_configs[2] = {GN_N_CONFIG, IN_N_CONFIG};
  size_t i;
  for (i = 0; i < 2; ++i) {
    kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                            .create = channel_norm_create,
                            .forward = channel_norm_forward,
                            .destroy = channel_norm_destroy};
    kiln_status st;
    type.name = kinds[i]->layer;
    type.config = configs[i];
    type.n_config = n_configs[i];
    type.user = (void*)kinds[i];
    if ((st = kl_host.register_layer(registrar, &type)) != KILN_OK) return st;
  }
  return KILN_OK;
}
