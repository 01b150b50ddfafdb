/* Built twice, as PLUGIN_NAME "test-dup-a" and "test-dup-b": both register
 * the layer "TestDupLayer", so the second to load must be refused. */
#include "kiln/kiln_plugin.h"

static const kiln_host* host;

static kiln_status identity_create(void* user, kiln_layer_init* init, const kiln_attr* c, size_t n, void** state) {
  (void)user, (void)init, (void)c, (void)n;
  *state = NULL;
  return KILN_OK;
}

static kiln_status identity_forward(void* state, const kiln_layer_call* call) {
  (void)state;
  host->tensor_retain(call->inputs[0]);
  call->outputs[0] = call->inputs[0];
  return KILN_OK;
}

static kiln_status register_duplicate(const kiln_host* h, kiln_registrar* r) {
  kiln_layer_type layer = {0};
  host = h;
  layer.size = sizeof layer;
  layer.name = "TestDupLayer";
  layer.create = identity_create;
  layer.forward = identity_forward;
  return h->register_layer(r, &layer);
}

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor d = {sizeof d, KILN_PLUGIN_ABI(1, 0), KILN_PLUGIN_ABI(1, 0), PLUGIN_NAME,
                                           "1.0.0", register_duplicate};
  return &d;
}
