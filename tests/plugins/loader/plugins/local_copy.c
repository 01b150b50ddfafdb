/* Built twice (COPY_VALUE 1 as "test-local-a" with strategy "local_a", 2 as
 * "test-local-b" with "local_b"). Each carries its own copy of a function
 * with default visibility and the same name, as two plugins linking their
 * own copy of a library would. Its strategy reports that function's value
 * as its world size: loaded RTLD_LOCAL, each plugin calls its own copy. */
#include "kiln/kiln_plugin.h"

__attribute__((visibility("default"))) int kiln_test_copy_value(void) { return COPY_VALUE; }

static kiln_status local_create(void* user, kiln_runtime* rt, const kiln_attr* c, size_t n, void** state) {
  (void)user, (void)rt, (void)c, (void)n;
  *state = NULL;
  return KILN_OK;
}

static kiln_status local_rank(void* state, int* rank, int* world_size) {
  (void)state;
  *rank = 0;
  *world_size = kiln_test_copy_value();
  return KILN_OK;
}

static kiln_status local_reduce(void* state, kiln_tensor* const* p, size_t n) {
  (void)state, (void)p, (void)n;
  return KILN_OK;
}

static kiln_status register_local(const kiln_host* h, kiln_registrar* r) {
  kiln_strategy_type s = {0};
  s.size = sizeof s;
  s.name = STRATEGY_NAME;
  s.create = local_create;
  s.rank = local_rank;
  s.reduce_gradients = local_reduce;
  return h->register_strategy(r, &s);
}

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor d = {sizeof d, KILN_PLUGIN_ABI(1, 0), KILN_PLUGIN_ABI(1, 0), PLUGIN_NAME,
                                           "1.0.0", register_local};
  return &d;
}
