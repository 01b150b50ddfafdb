/* A plugin that speaks only plugin ABI 2.x: a 1.x host must refuse it
 * without calling register_fn (which would leave a strategy behind). */
#include "kiln/kiln_plugin.h"

static kiln_status never_create(void* user, kiln_runtime* rt, const kiln_attr* c, size_t n, void** state) {
  (void)user, (void)rt, (void)c, (void)n, (void)state;
  return KILN_OK;
}
static kiln_status never_rank(void* state, int* rank, int* world) {
  (void)state;
  *rank = 0;
  *world = 1;
  return KILN_OK;
}
static kiln_status never_reduce(void* state, kiln_tensor* const* p, size_t n) {
  (void)state, (void)p, (void)n;
  return KILN_OK;
}

static kiln_status register_future(const kiln_host* h, kiln_registrar* r) {
  kiln_strategy_type s = {0};
  s.size = sizeof s;
  s.name = "test_future_was_registered";
  s.create = never_create;
  s.rank = never_rank;
  s.reduce_gradients = never_reduce;
  return h->register_strategy(r, &s);
}

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor d = {sizeof d, KILN_PLUGIN_ABI(2, 0), KILN_PLUGIN_ABI(2, 0), "test-future",
                                           "9.0.0", register_future};
  return &d;
}
