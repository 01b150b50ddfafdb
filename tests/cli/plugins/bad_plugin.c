/* A plugin with the two faults `kiln plugin-check` exists to find: the op
 * "bad_square" (x*x) whose backward forgets the factor 2, and a second
 * exported symbol besides kiln_plugin_entry. Its twin "good_square" has the
 * right backward, so the checker is seen to tell them apart, and
 * "refusing_square" refuses its backward for want of a kernel and
 * "f32_square" takes f32 alone, which the checker reports as skipped. */
#include "kiln/kiln_plugin.h"

static const kiln_host* host;

/* Exported on purpose: a plugin must export kiln_plugin_entry alone. */
__attribute__((visibility("default"))) int bad_plugin_extra_export(void) { return 1; }

static kiln_status square_infer(void* user, const kiln_infer_call* call) {
  (void)user;
  if (call->inputs[0].dtype != KILN_F64) return host->error(KILN_ERR_DTYPE_MISMATCH, "square: takes f64 only");
  call->outputs[0] = call->inputs[0];
  return KILN_OK;
}

static kiln_status square_cpu_kernel(void* user, const kiln_kernel_call* call) {
  kiln_tensor_desc desc;
  void *in = NULL, *out = NULL;
  int64_t numel = 1, i;
  int d;
  kiln_status st = host->tensor_describe(call->inputs[0], &desc);
  (void)user;
  if (st == KILN_OK) st = host->tensor_address(call->inputs[0], &in);
  if (st == KILN_OK) st = host->tensor_address(call->outputs[0], &out);
  if (st != KILN_OK) return st;
  for (d = 0; d < desc.rank; ++d) numel *= desc.dims[d];
  for (i = 0; i < numel; ++i) ((double*)out)[i] = ((const double*)in)[i] * ((const double*)in)[i];
  return KILN_OK;
}

/* grad * x * factor, with factor 2 for the right gradient and 1 for the wrong one. */
static kiln_status square_backward(const kiln_backward_call* call, int factor) {
  const kiln_op *mul = NULL, *add = NULL;
  kiln_tensor* two_x = NULL;
  kiln_tensor* x = call->inputs[0];
  kiln_status st = host->op_find(call->runtime, "mul", &mul);
  if (st == KILN_OK) st = host->op_find(call->runtime, "add", &add);
  if (st != KILN_OK || !call->needs_input_grad[0]) return st;
  if (factor == 2) {
    kiln_tensor* args[2] = {x, x};
    st = host->op_call1(call->runtime, add, args, 2, NULL, 0, &two_x);
    x = two_x;
  }
  if (st == KILN_OK) {
    kiln_tensor* args[2] = {call->grad_outputs[0], x};
    st = host->op_call1(call->runtime, mul, args, 2, NULL, 0, &call->grad_inputs[0]);
  }
  host->tensor_release(two_x);
  return st;
}

static kiln_status good_backward(void* user, const kiln_backward_call* call) {
  (void)user;
  return square_backward(call, 2);
}

static kiln_status bad_backward(void* user, const kiln_backward_call* call) {
  (void)user;
  return square_backward(call, 1);
}

static kiln_status refusing_backward(void* user, const kiln_backward_call* call) {
  (void)user, (void)call;
  return host->error(KILN_ERR_UNSUPPORTED, "refusing_square: no backward kernel for f64");
}

static kiln_status register_square(kiln_registrar* r, const char* name, const kiln_dtype* dtype,
                                   kiln_status (*backward)(void*, const kiln_backward_call*)) {
  static const char* const inputs[] = {"input"};
  kiln_op_type op = {0};
  op.size = sizeof op;
  op.name = name;
  op.input_names = inputs;
  op.n_inputs = 1;
  op.n_outputs = 1;
  op.dtypes = dtype;
  op.n_dtypes = 1;
  op.infer = square_infer;
  op.cpu_kernel = square_cpu_kernel;
  op.backward = backward;
  return host->register_op(r, &op);
}

static kiln_status register_bad(const kiln_host* h, kiln_registrar* r) {
  kiln_status st;
  host = h;
  static const kiln_dtype f64 = KILN_F64, f32 = KILN_F32;
  st = register_square(r, "good_square", &f64, good_backward);
  if (st == KILN_OK) st = register_square(r, "bad_square", &f64, bad_backward);
  if (st == KILN_OK) st = register_square(r, "refusing_square", &f64, refusing_backward);
  return st == KILN_OK ? register_square(r, "f32_square", &f32, good_backward) : st;
}

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor d = {sizeof d, KILN_PLUGIN_ABI(1, 0), KILN_PLUGIN_ABI(1, 0), "test-bad",
                                           "0.1.0", register_bad};
  return &d;
}
