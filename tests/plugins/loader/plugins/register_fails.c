/* A plugin whose registration fails after it registered a strategy: the
 * host must refuse it and keep nothing of it. */
#include "kiln/kiln_plugin.h"

static kiln_status half_create(void* user, kiln_runtime* rt, const kiln_attr* c, size_t n, void** state) {
  (void)user, (void)rt, (void)c, (void)n, (void)state;
  return KILN_OK;
}
static kiln_status half_rank(void* state, int* rank, int* world) {
  (void)state;
  *rank = 0;
  *world = 1;
  return KILN_OK;
}
static kiln_status half_reduce(void* state, kiln_tensor* const* p, size_t n) {
  (void)state, (void)p, (void)n;
  return KILN_OK;
}

static kiln_status register_fails(const kiln_host* h, kiln_registrar* r) {
  kiln_strategy_type s = {0};
  kiln_status st;
  s.size = sizeof s;
  s.name = "test_half_registered";
  s.create = half_create;
  s.rank = half_rank;
  s.reduce_gradients = half_reduce;
  st = h->register_strategy(r, &s);
  if (st != KILN_OK) return st;
  return h->error(KILN_ERR_IO, "cannot read its settings file");
}

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor d = {sizeof d, KILN_PLUGIN_ABI(1, 0), KILN_PLUGIN_ABI(1, 0), "test-fails",
                                           "1.0.0", register_fails};
  return &d;
}
