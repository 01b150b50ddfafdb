/* The op lion_sign(input): -1, 0 or +1 per element, which Lion's update
 * needs and the runtime's op set lacks. It is named after its user so that
 * it never takes the name of a built-in "sign" (a taken name would refuse
 * the whole plugin). It has no backward: its gradient is zero almost
 * everywhere, and Lion calls it with gradient recording off. */
#include "swish_plugin.h"

typedef struct sign_chunk_args {
  kiln_dtype dtype;
  const void* input;
  void* out;
} sign_chunk_args;

#define SIGN_LOOP(T)                                     \
  do {                                                   \
    const T* x = (const T*)a->input;                     \
    T* y = (T*)a->out;                                   \
    for (int64_t i = begin; i < end; ++i)                \
      y[i] = (T)((x[i] > 0) - (x[i] < 0));               \
  } while (0)

static kiln_status sign_chunk(void* user, int64_t begin, int64_t end) {
  const sign_chunk_args* a = user;
  if (a->dtype == KILN_F32) SIGN_LOOP(float);
  else SIGN_LOOP(double);
  return KILN_OK;
}

static kiln_status sign_infer(void* user, const kiln_infer_call* call) {
  (void)user;
  kiln_status st = check_float(&call->inputs[0], "lion_sign");
  if (st != KILN_OK) return st;
  call->outputs[0] = call->inputs[0];
  return KILN_OK;
}

static kiln_status sign_cpu_kernel(void* user, const kiln_kernel_call* call) {
  (void)user;
  sign_chunk_args a = {0};
  void* input = NULL;
  int64_t numel = 0;
  kiln_status st = tensor_elements(call->inputs[0], &input, &numel, &a.dtype);
  if (st == KILN_OK) st = host->tensor_address(call->outputs[0], &a.out);
  if (st != KILN_OK) return st;
  a.input = input;
  return host->parallel_for(call->context, numel, SWISH_PLUGIN_GRAIN, sign_chunk, &a);
}

kiln_status register_sign_op(kiln_registrar* registrar) {
  static const char* const inputs[] = {"input"};
  static const kiln_dtype dtypes[] = {KILN_F32, KILN_F64};
  kiln_op_type sign = {0};
  sign.size = sizeof sign;
  sign.name = "lion_sign";
  sign.input_names = inputs;
  sign.n_inputs = 1;
  sign.n_outputs = 1;
  sign.dtypes = dtypes;
  sign.n_dtypes = 2;
  sign.infer = sign_infer;
  sign.cpu_kernel = sign_cpu_kernel;
  return host->register_op(registrar, &sign);
}
