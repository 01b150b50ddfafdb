/* Conv2d(in_channels, out_channels, kernel_size, stride = 1, padding = 0,
 * dilation = 1, groups = 1, bias = true, init = "kaiming_uniform") on
 * [N, C, H, W]: weight [out, in / groups, kh, kw], bias [out]
 * U(-1/sqrt(fan_in), 1/sqrt(fan_in)) as in PyTorch, through "conv2d". */
#include <stdlib.h>

#include "config.h"
#include "conv_config.h"
#include "host.h"
#include "init.h"
#include "layers.h"

enum { GROUPS = KL_CONV_N_COMMON, BIAS, INIT, N_CONFIG };

static const kiln_attr_spec config[N_CONFIG] = {
    KL_CONV_CONFIG_COMMON,
    [GROUPS] = {{"groups", KILN_ATTR_INT, {.i = 1}}, 0, "blocked connections: in and out channels in groups"},
    [BIAS] = {{"bias", KILN_ATTR_BOOL, {.b = 1}}, 0, "learn an additive bias"},
    [INIT] = {{"init", KILN_ATTR_STRING, {.s = "kaiming_uniform"}},
              0,
              "weight initialiser: kaiming_uniform (PyTorch's default), kaiming_normal, xavier_uniform, "
              "xavier_normal, normal, zeros, ones"},
};

typedef struct conv_state {
  const kiln_op* conv2d;
  kiln_tensor* weight;
  kiln_tensor* bias; /* NULL without a bias */
  kl_conv_geometry g;
  int64_t groups;
} conv_state;

static void conv_destroy(void* state) {
  conv_state* s = state;
  kl_host.tensor_release(s->weight);
  kl_host.tensor_release(s->bias);
  free(s);
}

static kiln_status check_groups(const kiln_attr* entry, const kl_conv_geometry* g) {
  const int64_t groups = entry->value.i;
  const kiln_status st = kl_check_int_min("Conv2d", entry, 1);
  if (st != KILN_OK) return st;
  if (g->in_channels % groups == 0 && g->out_channels % groups == 0) return KILN_OK;
  return kl_fail(KILN_ERR_INVALID_ARGUMENT,
                 "Conv2d: groups = %lld must divide in_channels (%lld) and out_channels (%lld)", (long long)groups,
                 (long long)g->in_channels, (long long)g->out_channels);
}

/* The weight [out, in / groups, kh, kw] and the bias [out]. */
static kiln_status add_parameters(conv_state* s, kiln_layer_init* init, kl_init weight_init, int has_bias) {
  const kl_conv_geometry* g = &s->g;
  const int64_t receptive = g->kernel[0] * g->kernel[1];
  const int64_t shape[4] = {g->out_channels, g->in_channels / s->groups, g->kernel[0], g->kernel[1]};
  const int64_t fan_in = shape[1] * receptive, fan_out = g->out_channels * receptive;
  kiln_status st = kl_add_parameter(init, "weight", weight_init, shape, 4, fan_in, fan_out, &s->weight);
  if (st == KILN_OK && has_bias)
    st = kl_add_parameter(init, "bias", KL_INIT_KAIMING_UNIFORM, &g->out_channels, 1, fan_in, fan_out, &s->bias);
  return st;
}

static kiln_status conv_create(void* user, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config,
                               void** state) {
  kl_conv_geometry g;
  conv_state* s;
  int weight_init = 0;
  kiln_status st;
  (void)user;
  (void)n_config;
  if ((st = kl_read_conv_geometry("Conv2d", cfg, &g)) != KILN_OK) return st;
  if ((st = check_groups(&cfg[GROUPS], &g)) != KILN_OK) return st;
  if ((st = kl_read_choice("Conv2d", &cfg[INIT], kl_init_names, &weight_init)) != KILN_OK) return st;
  s = calloc(1, sizeof *s);
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "Conv2d: no memory for its state");
  s->g = g;
  s->groups = cfg[GROUPS].value.i;
  st = kl_host.op_find(kl_host.layer_init_runtime(init), "conv2d", &s->conv2d);
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
  kiln_tensor* inputs[3];
  kiln_attr attrs[4];
  const kiln_status st = kl_expect_inputs("Conv2d", call, 1);
  if (st != KILN_OK) return st;
  inputs[0] = call->inputs[0];
  inputs[1] = s->weight;
  inputs[2] = s->bias;
  attrs[0] = kiln_attr_ints("stride", s->g.stride, 2);
  attrs[1] = kiln_attr_ints("padding", s->g.padding, 2);
  attrs[2] = kiln_attr_ints("dilation", s->g.dilation, 2);
  attrs[3] = kiln_attr_int("groups", s->groups);
  return kl_host.op_call1(call->runtime, s->conv2d, inputs, 3, attrs, 4, &call->outputs[0]);
}

kiln_status kl_register_conv(kiln_registrar* registrar) {
  const kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                                .name = "Conv2d",
                                .config = config,
                                .n_config = N_CONFIG,
                                .create = conv_create,
                                .forward = conv_forward,
                                .destroy = conv_destroy};
  return kl_host.register_layer(registrar, &type);
}
