/* PReLU(num_parameters = 1, init = 0.25), PyTorch's semantics: x where it
 * is positive, weight * x elsewhere, with one learnt slope (weight) for
 * every channel or one for all (num_parameters = 1). One prelu op call. */
#include <stdlib.h>

#include "config.h"
#include "host.h"
#include "layers.h"

enum { NUM_PARAMETERS, INIT, N_CONFIG };

static const kiln_attr_spec config[N_CONFIG] = {
    [NUM_PARAMETERS] = {{"num_parameters", KILN_ATTR_INT, {.i = 1}}, 0, "slopes: 1, or the channels C of the input"},
    [INIT] = {{"init", KILN_ATTR_FLOAT, {.f = 0.25}}, 0, "initial value of every slope"},
};

typedef struct prelu_state {
  const kiln_op* prelu;
  kiln_tensor* weight;
} prelu_state;

static void prelu_destroy(void* state) {
  prelu_state* s = state;
  kl_host.tensor_release(s->weight);
  free(s);
}

static kiln_status prelu_create(void* user, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config,
                                void** state) {
  kiln_runtime* rt = kl_host.layer_init_runtime(init);
  const int64_t* n = &cfg[NUM_PARAMETERS].value.i;
  prelu_state* s;
  kiln_tensor* weight = NULL;
  kiln_status st;
  (void)user;
  (void)n_config;
  if ((st = kl_check_int_min("PReLU", &cfg[NUM_PARAMETERS], 1)) != KILN_OK) return st;
  s = calloc(1, sizeof *s);
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "PReLU: no memory for its state");
  st = kl_host.op_find(rt, "prelu", &s->prelu);
  if (st == KILN_OK) st = kl_host.tensor_full(rt, n, 1, cfg[INIT].value.f, KILN_F32, KILN_DEVICE_CPU, 0, &weight);
  if (st == KILN_OK) st = kl_host.layer_add_parameter(init, "weight", weight);
  if (st == KILN_OK) s->weight = weight;
  else kl_host.tensor_release(weight);
  if (st != KILN_OK) {
    prelu_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

static kiln_status prelu_forward(void* state, const kiln_layer_call* call) {
  const prelu_state* s = state;
  kiln_tensor* inputs[2];
  const kiln_status st = kl_expect_inputs("PReLU", call, 1);
  if (st != KILN_OK) return st;
  inputs[0] = call->inputs[0];
  inputs[1] = s->weight;
  return kl_host.op_call1(call->runtime, s->prelu, inputs, 2, NULL, 0, &call->outputs[0]);
}

kiln_status kl_register_prelu(kiln_registrar* registrar) {
  const kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                                .name = "PReLU",
                                .config = config,
                                .n_config = N_CONFIG,
                                .create = prelu_create,
                                .forward = prelu_forward,
                                .destroy = prelu_destroy};
  return kl_host.register_layer(registrar, &type);
}
