/* The layer "Swish": y = swish(x, beta) with beta a learnable one-element
 * parameter (config "beta", 1.0 by default: SiLU at the start). Its forward
 * is the plugin's op, so the backward comes from that op. */
#include <stdio.h>
#include <stdlib.h>

#include "swish_plugin.h"

typedef struct swish_layer {
  kiln_tensor* beta;
  const kiln_op* swish;
} swish_layer;

static void swish_layer_destroy(void* state) {
  swish_layer* layer = state;
  host->tensor_release(layer->beta);
  free(layer);
}

static kiln_status swish_layer_create(void* user, kiln_layer_init* init, const kiln_attr* config, size_t n_config,
                                      void** state) {
  (void)user;
  (void)n_config; /* config follows the schema: config[0] is "beta" */
  const int64_t beta_shape[1] = {1};
  kiln_runtime* rt = host->layer_init_runtime(init);
  swish_layer* layer = calloc(1, sizeof *layer);
  if (!layer) return host->error(KILN_ERR_OUT_OF_MEMORY, "Swish: no memory for the layer's state");
  kiln_status st = host->op_find(rt, "swish", &layer->swish);
  if (st == KILN_OK)
    st = host->tensor_full(rt, beta_shape, 1, config[0].value.f, KILN_F32, KILN_DEVICE_CPU, 0, &layer->beta);
  if (st == KILN_OK) st = host->layer_add_parameter(init, "beta", layer->beta);
  if (st != KILN_OK) {
    swish_layer_destroy(layer);
    return st;
  }
  *state = layer;
  return KILN_OK;
}

static kiln_status swish_layer_forward(void* state, const kiln_layer_call* call) {
  swish_layer* layer = state;
  char message[96];
  if (call->n_inputs != 1) {
    snprintf(message, sizeof message, "Swish takes one input, got %zu", call->n_inputs);
    return host->error(KILN_ERR_INVALID_ARGUMENT, message);
  }
  kiln_tensor* args[2] = {call->inputs[0], layer->beta};
  return host->op_call1(call->runtime, layer->swish, args, 2, NULL, 0, &call->outputs[0]);
}

kiln_status register_swish_layer(kiln_registrar* registrar) {
  static const kiln_attr_spec config[] = {
      {{"beta", KILN_ATTR_FLOAT, {.f = 1.0}}, 0, "initial value of the learnable slope beta"}};
  kiln_layer_type swish = {0};
  swish.size = sizeof swish;
  swish.name = "Swish";
  swish.config = config;
  swish.n_config = 1;
  swish.create = swish_layer_create;
  swish.forward = swish_layer_forward;
  swish.destroy = swish_layer_destroy;
  return host->register_layer(registrar, &swish);
}
