/* A plugin that registers an op named like a built-in one ("relu"). */
#include "kiln/kiln_plugin.h"

static kiln_status same_shape(void* user, const kiln_infer_call* call) {
  (void)user;
  call->outputs[0] = call->inputs[0];
  return KILN_OK;
}

static kiln_status do_nothing(void* user, const kiln_kernel_call* call) {
  (void)user, (void)call;
  return KILN_OK;
}

static kiln_status register_clash(const kiln_host* h, kiln_registrar* r) {
  static const char* const inputs[] = {"x"};
  static const kiln_dtype dtypes[] = {KILN_F32};
  kiln_op_type op = {0};
  op.size = sizeof op;
  op.name = "relu";
  op.input_names = inputs;
  op.n_inputs = 1;
  op.n_outputs = 1;
  op.dtypes = dtypes;
  op.n_dtypes = 1;
  op.infer = same_shape;
  op.cpu_kernel = do_nothing;
  return h->register_op(r, &op);
}

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor d = {sizeof d, KILN_PLUGIN_ABI(1, 0), KILN_PLUGIN_ABI(1, 0), "test-clash",
                                           "1.0.0", register_clash};
  return &d;
}
