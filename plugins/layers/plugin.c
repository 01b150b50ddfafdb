/* kiln-layers: kiln's built-in layer types, written against kiln_plugin.h
 * alone. Every forward is made of the runtime's ops, so the layers run on
 * every device kiln supports and get their backward from the ops'. */
#include "host.h"
#include "layers.h"

static kiln_status register_plugin(const kiln_host* host, kiln_registrar* registrar) {
  static kiln_status (*const families[])(kiln_registrar*) = {
      kl_register_linear,    kl_register_conv,       kl_register_separable_conv, kl_register_op_layers,
      kl_register_flatten,   kl_register_dropout,    kl_register_batch_norm,     kl_register_layer_norm,
      kl_register_embedding, kl_register_attention,  kl_register_transformer,
      kl_register_channel_norm, kl_register_upsample, kl_register_prelu,
      kl_register_lstm,      kl_register_gru,
  };
  size_t i;
  kl_host_set(host);
  for (i = 0; i < sizeof families / sizeof families[0]; ++i) {
    const kiln_status st = families[i](registrar);
    if (st != KILN_OK) return st;
  }
  return KILN_OK;
}

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor descriptor = {sizeof descriptor,  KILN_PLUGIN_ABI(1, 0),
                                                    KILN_PLUGIN_ABI(1, 0), "kiln-layers",
                                                    "0.1.0",             register_plugin};
  return &descriptor;
}
