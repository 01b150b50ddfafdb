/* The convolution layers, each through one op, with PyTorch's parameters:
 *   Conv1d(in_channels, out_channels, kernel_size, stride = 1, padding = 0,
 *          dilation = 1, groups = 1, bias = true, init = "kaiming_uniform")
 *     on [N, C, L]: weight [out, in / groups, k], through "conv1d";
 *   Conv2d(same entries) on [N, C, H, W]: weight [out, in / groups, kh, kw],
 *     through "conv2d";
 *   ConvTranspose2d(same entries, output_padding = 0) on [N, C, H, W]:
 *     weight [in, out / groups, kh, kw], through "conv_transpose2d".
 * bias [out]. Weight and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)) as in
 * PyTorch, with fan_in = weight.size(1) * kernel elements, which for the
 * transposed layer counts out / groups, as PyTorch does. */
#include <stdlib.h>

#include "config.h"
#include "conv_config.h"
#include "host.h"
#include "init.h"
#include "layers.h"

enum { GROUPS = KL_CONV_N_COMMON, BIAS, INIT, N_CONFIG, OUTPUT_PADDING = N_CONFIG, N_TRANSPOSED_CONFIG };

#define CONV_CONFIG_TAIL                                                                                           \
  [GROUPS] = {{"groups", KILN_ATTR_INT, {.i = 1}}, 0, "blocked connections: in and out channels in groups"},       \
  [BIAS] = {{"bias", KILN_ATTR_BOOL, {.b = 1}}, 0, "learn an additive bias"},                                      \
  [INIT] = {{"init", KILN_ATTR_STRING, {.s = "kaiming_uniform"}},                                                  \
            0,                                                                                                     \
            "weight initialiser: kaiming_uniform (PyTorch's default), kaiming_normal, xavier_uniform, "            \
            "xavier_normal, normal, zeros, ones"}

static const kiln_attr_spec config[N_CONFIG] = {KL_CONV_CONFIG_COMMON, CONV_CONFIG_TAIL};

static const kiln_attr_spec transposed_config[N_TRANSPOSED_CONFIG] = {
    KL_CONV_CONFIG_COMMON,
    CONV_CONFIG_TAIL,
    [OUTPUT_PADDING] = {{"output_padding", KILN_ATTR_INTS, {.ints = {kl_zero, 1}}},
                        0,
                        "added to one side of the output size: [p] or [ph, pw], smaller than stride or dilation"},
};

/* What tells the three layers apart. */
typedef struct conv_kind {
  const char* layer;
  const char* op;
  int spatial_dims; /* 1: [N, C, L]; 2: [N, C, H, W] */
  int transposed;   /* weight [in, out / groups, ...], output_padding */
} conv_kind;

static const conv_kind conv1d_kind = {"Conv1d", "conv1d", 1, 0};
static const conv_kind conv2d_kind = {"Conv2d", "conv2d", 2, 0};
static const conv_kind transposed2d_kind = {"ConvTranspose2d", "conv_transpose2d", 2, 1};

typedef struct conv_state {
  const conv_kind* kind;
  const kiln_op* op;
  kiln_tensor* weight;
  kiln_tensor* bias; /* NULL without a bias */
  kl_conv_geometry g;
  int64_t groups;
  int64_t output_padding[2];
} conv_state;

static void conv_destroy(void* state) {
  conv_state* s = state;
  kl_host.tensor_release(s->weight);
  kl_host.tensor_release(s->bias);
  free(s);
}

static kiln_status check_groups(const conv_kind* kind, const kiln_attr* entry, const kl_conv_geometry* g) {
  const int64_t groups = entry->value.i;
  const kiln_status st = kl_check_int_min(kind->layer, entry, 1);
  if (st != KILN_OK) return st;
  if (g->in_channels % groups == 0 && g->out_channels % groups == 0) return KILN_OK;
  return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s: groups = %lld must divide in_channels (%lld) and out_channels (%lld)",
                 kind->layer, (long long)groups, (long long)g->in_channels, (long long)g->out_channels);
}

/* A 1-D layer's list entries take one value (its length); [k] reads as
 * [k, k], so either half of the geometry serves. */
static kiln_status check_one_value(const conv_kind* kind, const kiln_attr* config) {
  static const int entries[] = {KL_CONV_KERNEL, KL_CONV_STRIDE, KL_CONV_PADDING, KL_CONV_DILATION};
  size_t i;
  if (kind->spatial_dims != 1) return KILN_OK;
  for (i = 0; i < sizeof entries / sizeof entries[0]; ++i) {
    const kiln_attr* entry = &config[entries[i]];
    if (entry->value.ints.len > 1)
      return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s: %s takes 1 value (length), got %zu", kind->layer, entry->name,
                     entry->value.ints.len);
  }
  return KILN_OK;
}

/* Each of output_padding's values must be below the stride or the dilation
 * of its dimension, as in PyTorch. */
static kiln_status read_output_padding(conv_state* s, const kiln_attr* entry) {
  const kiln_status st = kl_read_pair(s->kind->layer, entry, 0, 0, s->output_padding);
  int i;
  if (st != KILN_OK) return st;
  for (i = 0; i < 2; ++i)
    if (s->output_padding[i] >= s->g.stride[i] && s->output_padding[i] >= s->g.dilation[i])
      return kl_fail(KILN_ERR_INVALID_ARGUMENT,
                     "%s: output_padding [%lld, %lld] must be smaller than stride [%lld, %lld] or dilation [%lld, %lld]",
                     s->kind->layer, (long long)s->output_padding[0], (long long)s->output_padding[1],
                     (long long)s->g.stride[0], (long long)s->g.stride[1], (long long)s->g.dilation[0],
                     (long long)s->g.dilation[1]);
  return KILN_OK;
}

/* The weight ([out, in / groups, k...], or [in, out / groups, k...] when
 * transposed) and the bias [out]. */
static kiln_status add_parameters(conv_state* s, kiln_layer_init* init, kl_init weight_init, int has_bias) {
  const kl_conv_geometry* g = &s->g;
  const int rank = 2 + s->kind->spatial_dims;
  const int64_t receptive = s->kind->spatial_dims == 1 ? g->kernel[1] : g->kernel[0] * g->kernel[1];
  int64_t shape[4];
  int64_t fan_in, fan_out;
  kiln_status st;
  shape[0] = s->kind->transposed ? g->in_channels : g->out_channels;
  shape[1] = (s->kind->transposed ? g->out_channels : g->in_channels) / s->groups;
  shape[2] = s->kind->spatial_dims == 1 ? g->kernel[1] : g->kernel[0];
  shape[3] = g->kernel[1];
  fan_in = shape[1] * receptive;
  fan_out = shape[0] * receptive;
  st = kl_add_parameter(init, "weight", weight_init, shape, rank, fan_in, fan_out, &s->weight);
  if (st == KILN_OK && has_bias)
    st = kl_add_parameter(init, "bias", KL_INIT_KAIMING_UNIFORM, &g->out_channels, 1, fan_in, fan_out, &s->bias);
  return st;
}

static kiln_status conv_create(void* user, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config,
                               void** state) {
  const conv_kind* kind = user;
  kl_conv_geometry g;
  conv_state* s;
  int weight_init = 0;
  kiln_status st;
  (void)n_config;
  if ((st = check_one_value(kind, cfg)) != KILN_OK) return st;
  if ((st = kl_read_conv_geometry(kind->layer, cfg, &g)) != KILN_OK) return st;
  if ((st = check_groups(kind, &cfg[GROUPS], &g)) != KILN_OK) return st;
  if ((st = kl_read_choice(kind->layer, &cfg[INIT], kl_init_names, &weight_init)) != KILN_OK) return st;
  s = calloc(1, sizeof *s);
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "%s: no memory for its state", kind->layer);
  s->kind = kind;
  s->g = g;
  s->groups = cfg[GROUPS].value.i;
  st = kind->transposed ? read_output_padding(s, &cfg[OUTPUT_PADDING]) : KILN_OK;
  if (st == KILN_OK) st = kl_host.op_find(kl_host.layer_init_runtime(init), kind->op, &s->op);
  if (st == KILN_OK) st = add_parameters(s, init, (kl_init)weight_init, cfg[BIAS].value.b);
  if (st != KILN_OK) {
    conv_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

static kiln_status conv_forward(void* state, const kiln_layer_call* call) {
  const conv_state* s = state;
  /* A 1-D op takes the width half of each pair. */
  const int first = s->kind->spatial_dims == 1 ? 1 : 0, len = s->kind->spatial_dims;
  kiln_tensor* inputs[3];
  kiln_attr attrs[5];
  size_t n_attrs = 4;
  const kiln_status st = kl_expect_inputs(s->kind->layer, call, 1);
  if (st != KILN_OK) return st;
  inputs[0] = call->inputs[0];
  inputs[1] = s->weight;
  inputs[2] = s->bias;
  attrs[0] = kiln_attr_ints("stride", s->g.stride + first, len);
  attrs[1] = kiln_attr_ints("padding", s->g.padding + first, len);
  attrs[2] = kiln_attr_ints("dilation", s->g.dilation + first, len);
  attrs[3] = kiln_attr_int("groups", s->groups);
  if (s->kind->transposed) attrs[n_attrs++] = kiln_attr_ints("output_padding", s->output_padding, 2);
  return kl_host.op_call1(call->runtime, s->op, inputs, 3, attrs, n_attrs, &call->outputs[0]);
}

static kiln_status register_kind(kiln_registrar* registrar, const conv_kind* kind) {
  kiln_layer_type type = {.size = sizeof(kiln_layer_type)};
  type.name = kind->layer;
  type.config = kind->transposed ? transposed_config : config;
  type.n_config = kind->transposed ? N_TRANSPOSED_CONFIG : N_CONFIG;
  type.user = (void*)kind;
  type.create = conv_create;
  type.forward = conv_forward;
  type.destroy = conv_destroy;
  return kl_host.register_layer(registrar, &type);
}

kiln_status kl_register_conv(kiln_registrar* registrar) {
  kiln_status st = register_kind(registrar, &conv2d_kind);
  if (st == KILN_OK) st = register_kind(registrar, &conv1d_kind);
  if (st == KILN_OK) st = register_kind(registrar, &transposed2d_kind);
  return st;
}
