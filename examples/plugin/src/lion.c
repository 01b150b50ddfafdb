/* The optimizer "Lion" (Chen et al. 2023, "Symbolic Discovery of
 * Optimization Algorithms"). Per parameter p with gradient g and state
 * m ("exp_avg", zero at first):
 *   update = sign(beta1 * m + (1 - beta1) * g)
 *   p      = p * (1 - lr * weight_decay) - lr * update
 *   m      = beta2 * m + (1 - beta2) * g
 * Made of host ops (and the plugin's lion_sign), so it runs wherever they do. */
#include <stdio.h>

#include "swish_plugin.h"

/* Hyper-parameters in schema order. */
enum { LION_LR, LION_BETAS, LION_WEIGHT_DECAY, LION_N_HYPER };

typedef struct lion_hyper {
  double lr, beta1, beta2, weight_decay;
} lion_hyper;

static kiln_status read_hyper(const kiln_attr* hyper, lion_hyper* out) {
  char message[160];
  const kiln_attr* betas = &hyper[LION_BETAS];
  if (betas->value.floats.len != 2) {
    snprintf(message, sizeof message, "Lion: betas must hold two numbers (beta1, beta2), got %zu",
             betas->value.floats.len);
    return host->error(KILN_ERR_INVALID_ARGUMENT, message);
  }
  out->lr = hyper[LION_LR].value.f;
  out->beta1 = betas->value.floats.data[0];
  out->beta2 = betas->value.floats.data[1];
  out->weight_decay = hyper[LION_WEIGHT_DECAY].value.f;
  if (!(out->beta1 >= 0.0 && out->beta1 < 1.0 && out->beta2 >= 0.0 && out->beta2 < 1.0)) {
    snprintf(message, sizeof message, "Lion: betas must lie in [0, 1), got [%g, %g]", out->beta1, out->beta2);
    return host->error(KILN_ERR_INVALID_ARGUMENT, message);
  }
  if (!(out->lr >= 0.0) || !(out->weight_decay >= 0.0)) {
    snprintf(message, sizeof message, "Lion: lr and weight_decay must be >= 0, got lr %g, weight_decay %g", out->lr,
             out->weight_decay);
    return host->error(KILN_ERR_INVALID_ARGUMENT, message);
  }
  return KILN_OK;
}

/* `user` is the runtime the type was registered in (see register_lion):
 * the state tensors must belong to the optimizer's runtime. */
static kiln_status lion_init_state(void* user, kiln_optimizer_state_init* init, kiln_tensor* param,
                                   const kiln_attr* hyper, size_t n_hyper) {
  (void)n_hyper;
  kiln_runtime* rt = user;
  lion_hyper checked;
  kiln_tensor_desc desc;
  kiln_device_type device = KILN_DEVICE_CPU;
  int device_index = 0;
  kiln_tensor* exp_avg = NULL;
  kiln_status st = read_hyper(hyper, &checked); /* bad hyper-parameters fail before the first update */
  if (st == KILN_OK) st = host->tensor_describe(param, &desc);
  if (st == KILN_OK) st = host->tensor_device(param, &device, &device_index);
  if (st == KILN_OK) st = host->tensor_full(rt, desc.dims, desc.rank, 0.0, desc.dtype, device, device_index, &exp_avg);
  if (st == KILN_OK) st = host->optimizer_add_state(init, "exp_avg", exp_avg);
  host->tensor_release(exp_avg); /* the optimizer keeps its own reference */
  return st;
}

/* a * x + b * y, a new tensor. */
static kiln_status scaled_sum(kiln_runtime* rt, double a, kiln_tensor* x, double b, kiln_tensor* y,
                              kiln_tensor** out) {
  kiln_tensor *ax = NULL, *by = NULL;
  kiln_attr scale = kiln_attr_float("value", a);
  kiln_status st = call_op1(rt, "mul_scalar", &x, 1, &scale, 1, &ax);
  scale.value.f = b;
  if (st == KILN_OK) st = call_op1(rt, "mul_scalar", &y, 1, &scale, 1, &by);
  if (st == KILN_OK) {
    kiln_tensor* terms[2] = {ax, by};
    st = call_op1(rt, "add", terms, 2, NULL, 0, out);
  }
  host->tensor_release(ax);
  host->tensor_release(by);
  return st;
}

static kiln_status lion_update(void* user, const kiln_optimizer_update* call) {
  (void)user;
  kiln_runtime* rt = call->runtime;
  kiln_tensor* exp_avg = call->state[0];
  kiln_tensor *mixed = NULL, *direction = NULL, *new_param = NULL, *new_exp_avg = NULL;
  lion_hyper h;
  kiln_status st = read_hyper(call->hyper, &h);
  if (st == KILN_OK) st = scaled_sum(rt, h.beta1, exp_avg, 1.0 - h.beta1, call->grad, &mixed);
  if (st == KILN_OK) st = call_op1(rt, "lion_sign", &mixed, 1, NULL, 0, &direction);
  if (st == KILN_OK) st = scaled_sum(rt, 1.0 - h.lr * h.weight_decay, call->param, -h.lr, direction, &new_param);
  if (st == KILN_OK) st = scaled_sum(rt, h.beta2, exp_avg, 1.0 - h.beta2, call->grad, &new_exp_avg);
  /* Both are written only once everything is computed: a failure leaves
   * the parameter and its state as they were. */
  if (st == KILN_OK) st = host->tensor_assign(call->param, new_param);
  if (st == KILN_OK) st = host->tensor_assign(exp_avg, new_exp_avg);
  host->tensor_release(mixed);
  host->tensor_release(direction);
  host->tensor_release(new_param);
  host->tensor_release(new_exp_avg);
  return st;
}

/* Called once per runtime that loads the plugin, with that runtime. */
kiln_status register_lion(kiln_registrar* registrar, kiln_runtime* rt) {
  static const double default_betas[2] = {0.9, 0.99};
  static const kiln_attr_spec hyper[LION_N_HYPER] = {
      [LION_LR] = {{"lr", KILN_ATTR_FLOAT, {.f = 1e-4}}, 0, "learning rate"},
      [LION_BETAS] = {{"betas", KILN_ATTR_FLOATS, {.floats = {default_betas, 2}}}, 0,
                      "(beta1, beta2): beta1 mixes the momentum into the update's sign, beta2 is the momentum's decay"},
      [LION_WEIGHT_DECAY] = {{"weight_decay", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "decoupled weight decay"},
  };
  kiln_optimizer_type lion = {0};
  lion.size = sizeof lion;
  lion.name = "Lion";
  lion.hyper = hyper;
  lion.user = rt;
  lion.n_hyper = LION_N_HYPER;
  lion.init_state = lion_init_state;
  lion.update = lion_update;
  return host->register_optimizer(registrar, &lion);
}
