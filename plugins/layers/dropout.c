/* Dropout(p = 0.5): in train mode each element is zeroed with probability p
 * and the others are scaled by 1 / (1 - p); in eval mode the input passes
 * through unchanged. */
#include <stdlib.h>

#include "config.h"
#include "dropout.h"
#include "host.h"
#include "layers.h"

kiln_status kl_dropout_apply(kl_scratch* s, const kiln_op* dropout, kiln_tensor* x, double p, int training,
                             kiln_tensor** out) {
  kiln_tensor* outputs[2] = {NULL, NULL}; /* the result and its mask */
  kiln_attr attrs[2];
  kiln_status st;
  if (!training || p == 0.0) {
    *out = x;
    return KILN_OK;
  }
  attrs[0] = kiln_attr_float("p", p);
  attrs[1] = kiln_attr_bool("training", 1);
  st = kl_call_n(s, dropout, &x, 1, attrs, 2, outputs, 2);
  if (st == KILN_OK) *out = outputs[0];
  return st;
}

static const kiln_attr_spec config[] = {
    {{"p", KILN_ATTR_FLOAT, {.f = 0.5}}, 0, "probability of an element to be zeroed, in [0, 1)"},
};

typedef struct dropout_state {
  const kiln_op* dropout;
  double p;
} dropout_state;

static kiln_status dropout_create(void* user, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config,
                                  void** state) {
  dropout_state* s;
  kiln_status st;
  (void)user;
  (void)n_config;
  if ((st = kl_check_float_range("Dropout", &cfg[0], 0.0, 1.0, 1)) != KILN_OK) return st;
  s = malloc(sizeof *s);
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "Dropout: no memory for its state");
  s->p = cfg[0].value.f;
  st = kl_host.op_find(kl_host.layer_init_runtime(init), "dropout", &s->dropout);
  if (st != KILN_OK) {
    free(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

static kiln_status dropout_forward(void* state, const kiln_layer_call* call) {
  const dropout_state* d = state;
  kl_scratch s;
  kiln_tensor* y = NULL;
  kiln_status st;
  kl_scratch_init(&s, call->runtime);
  KL_TRY(kl_expect_inputs("Dropout", call, 1));
  KL_TRY(kl_dropout_apply(&s, d->dropout, call->inputs[0], d->p, call->training, &y));
done:
  return kl_scratch_finish(&s, st, y, &call->outputs[0]);
}

kiln_status kl_register_dropout(kiln_registrar* registrar) {
  const kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                                .name = "Dropout",
                                .config = config,
                                .n_config = 1,
                                .create = dropout_create,
                                .forward = dropout_forward,
                                .destroy = free};
  return kl_host.register_layer(registrar, &type);
}
