/* kiln-example-swish: a third-party plugin for kiln, built against an
 * installed kiln and written against kiln_plugin.h alone. It adds
 *   - the op "swish" (x * sigmoid(beta * x)) with CPU kernels for f32 and
 *     f64 and a backward op "swish_backward",
 *   - the layer "Swish" with a learnable beta,
 *   - the optimizer "Lion", with its helper op "lion_sign".
 * The library exports kiln_plugin_entry and nothing else. */
#include <string.h>

#include "swish_plugin.h"

static kiln_host host_table;
const kiln_host* host = &host_table;

/* Keeps the members this plugin knows; a newer host's table is longer, an
 * older one's (within ABI 1.x) is not shorter than 1.0's, which is all this
 * plugin uses. */
static void copy_host_table(const kiln_host* h) {
  const size_t n = h->size < sizeof host_table ? h->size : sizeof host_table;
  memcpy(&host_table, h, n);
}

static kiln_status register_plugin(const kiln_host* h, kiln_registrar* registrar) {
  copy_host_table(h);
  kiln_status st = register_swish_ops(registrar);
  if (st == KILN_OK) st = register_swish_layer(registrar);
  if (st == KILN_OK) st = register_sign_op(registrar);
  if (st == KILN_OK) st = register_lion(registrar, h->runtime);
  return st;
}

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor descriptor = {sizeof(kiln_plugin_descriptor), KILN_PLUGIN_ABI(1, 0),
                                                    KILN_PLUGIN_ABI_CURRENT,          "kiln-example-swish",
                                                    "1.0.0",                          register_plugin};
  return &descriptor;
}
