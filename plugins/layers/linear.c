/* Linear(in_features, out_features, bias = true, init = "kaiming_uniform",
 * bias_init = "kaiming_uniform", activation = "none"): y = act(x W^T + b)
 * over the last dimension of x, with W [out_features, in_features]; the
 * activation runs in the same pass as the product (the linear op's), GELU
 * in eval mode only (see linear_forward). */
#include <stdlib.h>

#include "config.h"
#include "host.h"
#include "init.h"
#include "layers.h"
#include "scratch.h"

enum { IN_FEATURES, OUT_FEATURES, BIAS, INIT, BIAS_INIT, ACTIVATION, N_CONFIG };

/* The linear op's activation names, in the order of the enum. */
enum { ACTIVATION_NONE, ACTIVATION_RELU, ACTIVATION_GELU_TANH };
static const char* const activation_names[] = {"none", "relu", "gelu_tanh", NULL};

static const kiln_attr_spec config[N_CONFIG] = {
    [IN_FEATURES] = {{"in_features", KILN_ATTR_INT, {.i = 0}}, 1, "size of each input sample (the last dimension)"},
    [OUT_FEATURES] = {{"out_features", KILN_ATTR_INT, {.i = 0}}, 1, "size of each output sample"},
    [BIAS] = {{"bias", KILN_ATTR_BOOL, {.b = 1}}, 0, "learn an additive bias"},
    [INIT] = {{"init", KILN_ATTR_STRING, {.s = "kaiming_uniform"}},
              0,
              "weight initialiser: kaiming_uniform (PyTorch's default, U(-1/sqrt(in), 1/sqrt(in))), "
              "kaiming_normal, xavier_uniform, xavier_normal, normal, zeros, ones"},
    [BIAS_INIT] = {{"bias_init", KILN_ATTR_STRING, {.s = "kaiming_uniform"}},
                   0,
                   "bias initialiser, one of init's (with the weight's fans); PyTorch's default "
                   "U(-1/sqrt(in), 1/sqrt(in)), zeros for attention projections"},
    [ACTIVATION] = {{"activation", KILN_ATTR_STRING, {.s = "none"}},
                    0,
                    "applied to the output in the same pass: none, relu, gelu_tanh (GELU's tanh approximation, "
                    "PyTorch's GELU(approximate='tanh'); fused in eval mode only, as its backward would "
                    "recompute the product)"},
};

typedef struct linear_state {
  const kiln_op* linear;
  const kiln_op* gelu;
  kiln_tensor* weight;
  kiln_tensor* bias; /* NULL without a bias */
  int activation;    /* index into activation_names */
} linear_state;

static void linear_destroy(void* state) {
  linear_state* s = state;
  kl_host.tensor_release(s->weight);
  kl_host.tensor_release(s->bias);
  free(s);
}

static kiln_status linear_create(void* user, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config,
                                 void** state) {
  const int64_t in = cfg[IN_FEATURES].value.i, out = cfg[OUT_FEATURES].value.i;
  const int64_t weight_shape[2] = {out, in};
  linear_state* s;
  int weight_init = 0, bias_init = 0, activation = 0;
  kiln_status st;
  (void)user;
  (void)n_config;
  if ((st = kl_check_int_min("Linear", &cfg[IN_FEATURES], 1)) != KILN_OK) return st;
  if ((st = kl_check_int_min("Linear", &cfg[OUT_FEATURES], 1)) != KILN_OK) return st;
  if ((st = kl_read_choice("Linear", &cfg[INIT], kl_init_names, &weight_init)) != KILN_OK) return st;
  if ((st = kl_read_choice("Linear", &cfg[BIAS_INIT], kl_init_names, &bias_init)) != KILN_OK) return st;
  if ((st = kl_read_choice("Linear", &cfg[ACTIVATION], activation_names, &activation)) != KILN_OK) return st;
  s = calloc(1, sizeof *s);
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "Linear: no memory for its state");
  s->activation = activation;
  st = kl_host.op_find(kl_host.layer_init_runtime(init), "linear", &s->linear);
  if (st == KILN_OK) st = kl_host.op_find(kl_host.layer_init_runtime(init), "gelu", &s->gelu);
  if (st == KILN_OK) st = kl_add_parameter(init, "weight", (kl_init)weight_init, weight_shape, 2, in, out, &s->weight);
  if (st == KILN_OK && cfg[BIAS].value.b)
    st = kl_add_parameter(init, "bias", (kl_init)bias_init, &out, 1, in, out, &s->bias);
  if (st != KILN_OK) {
    linear_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

/* The product, then GELU (tanh form) as an op of its own. */
static kiln_status linear_then_gelu(const linear_state* s, kiln_runtime* rt, kiln_tensor* const* inputs,
                                    kiln_tensor** out) {
  const kiln_attr approximate = kiln_attr_string("approximate", "tanh");
  kiln_tensor* pre = NULL;
  kiln_status st = kl_host.op_call1(rt, s->linear, inputs, 3, NULL, 0, &pre);
  if (st == KILN_OK) st = kl_host.op_call1(rt, s->gelu, &pre, 1, &approximate, 1, out);
  kl_host.tensor_release(pre);
  return st;
}

static kiln_status linear_forward(void* state, const kiln_layer_call* call) {
  const linear_state* s = state;
  kiln_tensor* inputs[3];
  kiln_attr activation;
  const kiln_status st = kl_expect_inputs("Linear", call, 1);
  if (st != KILN_OK) return st;
  inputs[0] = call->inputs[0];
  inputs[1] = s->weight;
  inputs[2] = s->bias;
  /* The op keeps no pre-activation, so its GELU backward recomputes the
   * product: a training step then takes about 1.4x the time of the product
   * and gelu as two ops (bench/RESULTS.md). Training runs them as two ops;
   * eval mode, with no backward to pay for, takes the fused pass. */
  if (s->activation == ACTIVATION_GELU_TANH && call->training)
    return linear_then_gelu(s, call->runtime, inputs, &call->outputs[0]);
  activation = kiln_attr_string("activation", activation_names[s->activation]);
  return kl_host.op_call1(call->runtime, s->linear, inputs, 3, &activation, 1, &call->outputs[0]);
}

kiln_status kl_register_linear(kiln_registrar* registrar) {
  const kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                                .name = "Linear",
                                .config = config,
                                .n_config = N_CONFIG,
                                .create = linear_create,
                                .forward = linear_forward,
                                .destroy = linear_destroy};
  return kl_host.register_layer(registrar, &type);
}
