#include "child.h"

#include "host.h"

kiln_status kl_add_child(kiln_layer_init* init, const char* name, const char* type, const kiln_attr* config,
                         size_t n_config, kiln_module** out) {
  kiln_module* child = NULL;
  kiln_status st = kl_host.module_create(kl_host.layer_init_runtime(init), type, config, n_config, &child);
  if (st == KILN_OK) st = kl_host.layer_add_child(init, name, child);
  if (st != KILN_OK) {
    kl_host.module_release(child);
    return st;
  }
  *out = child;
  return KILN_OK;
}

kiln_status kl_forward_child(kl_scratch* s, kiln_module* child, kiln_tensor* x, kiln_tensor** out) {
  kiln_tensor* y = NULL;
  size_t n = 0;
  kiln_status st = kl_host.module_forward(child, &x, 1, &y, 1, &n);
  if (st != KILN_OK) return st;
  if (n != 1 || !y) {
    kl_host.tensor_release(y);
    return kl_fail(KILN_ERR_INTERNAL, "a sub-layer gave %zu outputs; expected 1", n);
  }
  st = kl_scratch_keep(s, y);
  if (st == KILN_OK) *out = y;
  return st;
}
