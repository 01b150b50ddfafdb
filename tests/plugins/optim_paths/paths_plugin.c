/*
 * A test plugin that exposes both update paths of kiln-optim's fused
 * optimizers: it loads kiln-optim (KILN_OPTIM_LIBRARY) and runs its
 * registration through a copy of the host table that registers every
 * optimizer twice, as it is ("SGD") and without update_group
 * ("SGD/per-parameter"), so that the host takes the per-parameter path for
 * the second. It also registers "LegacySGD", plain SGD from a type struct
 * as sized before update_group existed: the host must accept it and update
 * parameter by parameter.
 *
 * Built with DROP_STATE="name", the state tensor of that name is never
 * added, so that updates meet parameters with less state than they use.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "kiln/kiln_plugin.h"

static const kiln_host* host;
static kiln_host proxy;

static kiln_status register_both_paths(kiln_registrar* r, const kiln_optimizer_type* type) {
  char name[64];
  kiln_optimizer_type per_parameter = *type;
  kiln_status st = host->register_optimizer(r, type);
  if (st != KILN_OK) return st;
  snprintf(name, sizeof name, "%s/per-parameter", type->name);
  per_parameter.name = name; /* copied at registration */
  per_parameter.update_group = NULL;
  return host->register_optimizer(r, &per_parameter);
}

#ifdef DROP_STATE
static kiln_status add_state_but_one(kiln_optimizer_state_init* init, const char* name, kiln_tensor* t) {
  return strcmp(name, DROP_STATE) == 0 ? KILN_OK : host->optimizer_add_state(init, name, t);
}
#endif

/* p -= lr * grad, composed of host ops. */
static kiln_status legacy_update(void* user, const kiln_optimizer_update* call) {
  const kiln_op* mul_scalar = NULL;
  const kiln_op* sub = NULL;
  kiln_tensor *step = NULL, *updated = NULL;
  const kiln_attr value = kiln_attr_float("value", call->hyper[0].value.f);
  kiln_tensor* args[2];
  kiln_status st;
  (void)user;
  st = host->op_find(call->runtime, "mul_scalar", &mul_scalar);
  if (st == KILN_OK) st = host->op_find(call->runtime, "sub", &sub);
  if (st == KILN_OK) st = host->op_call1(call->runtime, mul_scalar, &call->grad, 1, &value, 1, &step);
  args[0] = call->param;
  args[1] = step;
  if (st == KILN_OK) st = host->op_call1(call->runtime, sub, args, 2, NULL, 0, &updated);
  if (st == KILN_OK) st = host->tensor_assign(call->param, updated);
  host->tensor_release(updated);
  host->tensor_release(step);
  return st;
}

static kiln_status register_plugin(const kiln_host* h, kiln_registrar* r) {
  static const kiln_attr_spec hyper[] = {{{"lr", KILN_ATTR_FLOAT, {.f = 0.1}}, 0, "learning rate"}};
  kiln_optimizer_type legacy = {0};
  void* library;
  kiln_plugin_entry_fn entry;
  const kiln_plugin_descriptor* optim;
  kiln_status st;
  host = h;
  legacy.size = offsetof(kiln_optimizer_type, update_group);
  legacy.name = "LegacySGD";
  legacy.hyper = hyper;
  legacy.n_hyper = 1;
  legacy.update = legacy_update;
  st = h->register_optimizer(r, &legacy);
  if (st != KILN_OK) return st;

  /* Stays loaded for the process: the optimizers registered from it run
   * its code. */
  library = dlopen(KILN_OPTIM_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!library) return h->error(KILN_ERR_NOT_FOUND, "cannot load kiln-optim");
  *(void**)&entry = dlsym(library, "kiln_plugin_entry");
  if (!entry) return h->error(KILN_ERR_NOT_FOUND, "kiln-optim has no kiln_plugin_entry");
  optim = entry();
  proxy = *h;
  proxy.register_optimizer = register_both_paths;
#ifdef DROP_STATE
  proxy.optimizer_add_state = add_state_but_one;
#endif
  return optim->register_fn(&proxy, r);
}

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor d = {sizeof d, KILN_PLUGIN_ABI(1, 0), KILN_PLUGIN_ABI(1, 0), PLUGIN_NAME,
                                           "1.0.0", register_plugin};
  return &d;
}
