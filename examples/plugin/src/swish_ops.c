/* The op swish(input, beta) = input * sigmoid(beta * input), beta a
 * one-element tensor (beta = 1 is SiLU; a large beta approaches ReLU), and
 * its backward op swish_backward. With s = sigmoid(beta * x):
 *   d swish / dx    = s + beta * x * s * (1 - s)
 *   d swish / dbeta = x * x * s * (1 - s)
 * swish_backward gives dx and the per-element terms of dbeta; the backward
 * of swish sums those to beta's shape with the host op sum_to. */
#include <math.h>
#include <stdio.h>

#include "swish_plugin.h"

static double sigmoid(double z) { return 1.0 / (1.0 + exp(-z)); }

/* ---- shapes ---------------------------------------------------------------- */

/* input: f32 or f64; beta: one element of input's dtype. */
static kiln_status check_input_and_beta(const char* op, const kiln_tensor_desc* input, const kiln_tensor_desc* beta) {
  char message[256], shape[96];
  kiln_status st = check_float(input, op);
  if (st != KILN_OK) return st;
  if (beta->dtype != input->dtype) {
    snprintf(message, sizeof message, "%s: beta must have the input's dtype %s, got %s", op,
             dtype_text(input->dtype), dtype_text(beta->dtype));
    return host->error(KILN_ERR_DTYPE_MISMATCH, message);
  }
  if (beta->rank < 0 || desc_numel(beta) != 1) {
    snprintf(message, sizeof message, "%s: beta must have exactly one element, got shape %s", op,
             beta->rank < 0 ? "(none)" : desc_shape_text(beta, shape, sizeof shape));
    return host->error(KILN_ERR_SHAPE_MISMATCH, message);
  }
  return KILN_OK;
}

static kiln_status swish_infer(void* user, const kiln_infer_call* call) {
  (void)user;
  kiln_status st = check_input_and_beta("swish", &call->inputs[0], &call->inputs[1]);
  if (st != KILN_OK) return st;
  call->outputs[0] = call->inputs[0];
  return KILN_OK;
}

/* inputs (grad, input, beta): grad shaped and typed like input. */
static kiln_status swish_backward_infer(void* user, const kiln_infer_call* call) {
  (void)user;
  const kiln_tensor_desc* grad = &call->inputs[0];
  const kiln_tensor_desc* input = &call->inputs[1];
  char message[256], grad_shape[96], input_shape[96];
  kiln_status st = check_input_and_beta("swish_backward", input, &call->inputs[2]);
  if (st != KILN_OK) return st;
  int same_shape = grad->rank == input->rank;
  for (int d = 0; same_shape && d < input->rank; ++d) same_shape = grad->dims[d] == input->dims[d];
  if (!same_shape || grad->dtype != input->dtype) {
    snprintf(message, sizeof message, "swish_backward: grad must be shaped and typed like input %s %s, got %s %s",
             desc_shape_text(input, input_shape, sizeof input_shape), dtype_text(input->dtype),
             desc_shape_text(grad, grad_shape, sizeof grad_shape), dtype_text(grad->dtype));
    return host->error(grad->dtype != input->dtype ? KILN_ERR_DTYPE_MISMATCH : KILN_ERR_SHAPE_MISMATCH, message);
  }
  call->outputs[0] = *input; /* grad_input */
  call->outputs[1] = *input; /* grad_beta per element, summed by the caller */
  return KILN_OK;
}

/* ---- CPU kernels ------------------------------------------------------------- */

/* What one chunk of either kernel reads and writes; `grad` and `grad_beta`
 * only in the backward. The math is done in double for both dtypes. */
typedef struct swish_chunk_args {
  kiln_dtype dtype;
  double beta;
  const void* input;
  const void* grad;
  void* out;       /* output (forward) or grad_input (backward) */
  void* grad_beta; /* per element */
} swish_chunk_args;

#define SWISH_FORWARD_LOOP(T)                                       \
  do {                                                              \
    const T* x = (const T*)a->input;                                \
    T* y = (T*)a->out;                                              \
    for (int64_t i = begin; i < end; ++i) {                         \
      const double xi = x[i];                                       \
      y[i] = (T)(xi * sigmoid(a->beta * xi));                       \
    }                                                               \
  } while (0)

#define SWISH_BACKWARD_LOOP(T)                                      \
  do {                                                              \
    const T* x = (const T*)a->input;                                \
    const T* g = (const T*)a->grad;                                 \
    T* dx = (T*)a->out;                                             \
    T* dbeta = (T*)a->grad_beta;                                    \
    for (int64_t i = begin; i < end; ++i) {                         \
      const double xi = x[i], gi = g[i];                            \
      const double s = sigmoid(a->beta * xi), slope = s * (1.0 - s); \
      dx[i] = (T)(gi * (s + a->beta * xi * slope));                 \
      dbeta[i] = (T)(gi * xi * xi * slope);                         \
    }                                                               \
  } while (0)

static kiln_status swish_forward_chunk(void* user, int64_t begin, int64_t end) {
  const swish_chunk_args* a = user;
  if (a->dtype == KILN_F32) SWISH_FORWARD_LOOP(float);
  else SWISH_FORWARD_LOOP(double);
  return KILN_OK;
}

static kiln_status swish_backward_chunk(void* user, int64_t begin, int64_t end) {
  const swish_chunk_args* a = user;
  if (a->dtype == KILN_F32) SWISH_BACKWARD_LOOP(float);
  else SWISH_BACKWARD_LOOP(double);
  return KILN_OK;
}

/* Fills the fields both kernels share from `input` and `beta`. */
static kiln_status read_input_and_beta(const kiln_tensor* input, const kiln_tensor* beta, swish_chunk_args* a,
                                       int64_t* numel) {
  void* data = NULL;
  kiln_status st = tensor_elements(input, &data, numel, &a->dtype);
  if (st != KILN_OK) return st;
  a->input = data;
  return tensor_scalar_value(beta, &a->beta);
}

static kiln_status swish_cpu_kernel(void* user, const kiln_kernel_call* call) {
  (void)user;
  swish_chunk_args a = {0};
  int64_t numel = 0;
  kiln_status st = read_input_and_beta(call->inputs[0], call->inputs[1], &a, &numel);
  if (st == KILN_OK) st = host->tensor_address(call->outputs[0], &a.out);
  if (st != KILN_OK) return st;
  return host->parallel_for(call->context, numel, SWISH_PLUGIN_GRAIN, swish_forward_chunk, &a);
}

static kiln_status swish_backward_cpu_kernel(void* user, const kiln_kernel_call* call) {
  (void)user;
  swish_chunk_args a = {0};
  int64_t numel = 0;
  void* grad = NULL;
  kiln_status st = read_input_and_beta(call->inputs[1], call->inputs[2], &a, &numel);
  if (st == KILN_OK) st = host->tensor_address(call->inputs[0], &grad);
  if (st == KILN_OK) st = host->tensor_address(call->outputs[0], &a.out);
  if (st == KILN_OK) st = host->tensor_address(call->outputs[1], &a.grad_beta);
  if (st != KILN_OK) return st;
  a.grad = grad;
  return host->parallel_for(call->context, numel, SWISH_PLUGIN_GRAIN, swish_backward_chunk, &a);
}

/* ---- backward of swish -------------------------------------------------------- */

/* grad_beta summed over the input's elements, into beta's shape. */
static kiln_status sum_to_beta_shape(kiln_runtime* rt, kiln_tensor* grad_beta_per_element, const kiln_tensor* beta,
                                     kiln_tensor** out) {
  kiln_tensor_desc beta_desc;
  kiln_status st = host->tensor_describe(beta, &beta_desc);
  if (st != KILN_OK) return st;
  const kiln_attr shape = kiln_attr_ints("shape", beta_desc.dims, (size_t)beta_desc.rank);
  return call_op1(rt, "sum_to", &grad_beta_per_element, 1, &shape, 1, out);
}

static kiln_status swish_backward(void* user, const kiln_backward_call* call) {
  (void)user;
  const kiln_op* backward_op = NULL;
  kiln_tensor* args[3] = {call->grad_outputs[0], call->inputs[0], call->inputs[1]};
  kiln_tensor* grads[2] = {NULL, NULL};
  size_t n_grads = 0;
  kiln_status st = host->op_find(call->runtime, "swish_backward", &backward_op);
  if (st == KILN_OK) st = host->op_call(call->runtime, backward_op, args, 3, NULL, 0, grads, 2, &n_grads);
  if (st != KILN_OK) return st;
  if (call->needs_input_grad[0]) {
    call->grad_inputs[0] = grads[0];
    grads[0] = NULL;
  }
  if (call->needs_input_grad[1]) st = sum_to_beta_shape(call->runtime, grads[1], call->inputs[1], &call->grad_inputs[1]);
  host->tensor_release(grads[0]);
  host->tensor_release(grads[1]);
  return st;
}

/* ---- registration ---------------------------------------------------------------- */

kiln_status register_swish_ops(kiln_registrar* registrar) {
  static const char* const swish_inputs[] = {"input", "beta"};
  static const char* const swish_backward_inputs[] = {"grad", "input", "beta"};
  static const kiln_dtype dtypes[] = {KILN_F32, KILN_F64};
  kiln_op_type swish = {0};
  swish.size = sizeof swish;
  swish.name = "swish";
  swish.input_names = swish_inputs;
  swish.n_inputs = 2;
  swish.n_outputs = 1;
  swish.dtypes = dtypes;
  swish.n_dtypes = 2;
  swish.infer = swish_infer;
  swish.cpu_kernel = swish_cpu_kernel;
  swish.backward = swish_backward;

  /* Its outputs are gradients: no backward of their own (no second order). */
  kiln_op_type grad = swish;
  grad.name = "swish_backward";
  grad.input_names = swish_backward_inputs;
  grad.n_inputs = 3;
  grad.n_outputs = 2;
  grad.infer = swish_backward_infer;
  grad.cpu_kernel = swish_backward_cpu_kernel;
  grad.backward = NULL;

  kiln_status st = host->register_op(registrar, &swish);
  if (st != KILN_OK) return st;
  return host->register_op(registrar, &grad);
}
