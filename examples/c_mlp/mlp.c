/* The MLP of mlp.h. Error handling is the C way: every kiln call goes
 * through TRY, which jumps to the function's cleanup on failure; releasing
 * NULL handles does nothing, so cleanup can release everything. */
#include "mlp.h"

#include <math.h>
#include <stddef.h>

#define TRY(call)                 \
  do {                            \
    status = (call);              \
    if (status != KILN_OK) goto done; \
  } while (0)

enum { kPoints = 64, kInputs = 2, kHidden = 16, kClasses = 2, kNumParams = 4 };

typedef struct mlp_ops {
  const kiln_op *linear, *relu, *cross_entropy, *mul_scalar, *sub;
} mlp_ops;

/* Parameters in the order w1, b1, w2, b2; each a leaf that requires grad. */
typedef struct mlp_model {
  kiln_tensor* params[kNumParams];
} mlp_model;

/* A small deterministic generator, so the example needs nothing but kiln. */
static float uniform(unsigned* state, float lo, float hi) {
  *state = *state * 1664525u + 1013904223u;
  return lo + (hi - lo) * (float)(*state >> 8) / 16777216.0f;
}

static kiln_status find_ops(kiln_runtime* rt, mlp_ops* ops) {
  kiln_status status;
  TRY(kiln_op_find(rt, "linear", &ops->linear));
  TRY(kiln_op_find(rt, "relu", &ops->relu));
  TRY(kiln_op_find(rt, "cross_entropy", &ops->cross_entropy));
  TRY(kiln_op_find(rt, "mul_scalar", &ops->mul_scalar));
  TRY(kiln_op_find(rt, "sub", &ops->sub));
done:
  return status;
}

/* Points in [-1, 1]^2, class 1 above the line x0 + 0.5 x1 = 0, with a margin
 * around the line so that the classes are cleanly separable. */
static kiln_status make_data(kiln_runtime* rt, kiln_tensor** x, kiln_tensor** y) {
  float points[kPoints][kInputs];
  int64_t labels[kPoints];
  const int64_t x_shape[2] = {kPoints, kInputs}, y_shape[1] = {kPoints};
  unsigned state = 7u;
  kiln_status status;
  int i = 0;
  while (i < kPoints) {
    const float a = uniform(&state, -1.0f, 1.0f), b = uniform(&state, -1.0f, 1.0f);
    if (fabsf(a + 0.5f * b) < 0.1f) continue;
    points[i][0] = a;
    points[i][1] = b;
    labels[i] = a + 0.5f * b > 0.0f ? 1 : 0;
    ++i;
  }
  TRY(kiln_tensor_from_data(rt, points, sizeof points, x_shape, 2, KILN_F32, x));
  TRY(kiln_tensor_from_data(rt, labels, sizeof labels, y_shape, 1, KILN_I64, y));
done:
  return status;
}

/* Uniform in +-1/sqrt(fan_in), the usual initialisation of linear layers. */
static kiln_status make_param(kiln_runtime* rt, const int64_t* shape, int rank, int64_t fan_in, unsigned* state,
                              kiln_tensor** out) {
  float values[kHidden * kInputs + kHidden * kClasses];
  const float bound = 1.0f / sqrtf((float)fan_in);
  int64_t n = 1;
  int i;
  kiln_status status;
  for (i = 0; i < rank; ++i) n *= shape[i];
  for (i = 0; i < n; ++i) values[i] = uniform(state, -bound, bound);
  TRY(kiln_tensor_from_data(rt, values, (size_t)n * sizeof(float), shape, rank, KILN_F32, out));
  TRY(kiln_tensor_set_requires_grad(*out, 1));
done:
  return status;
}

static kiln_status init_model(kiln_runtime* rt, mlp_model* m) {
  const int64_t w1[2] = {kHidden, kInputs}, b1[1] = {kHidden}, w2[2] = {kClasses, kHidden}, b2[1] = {kClasses};
  unsigned state = 12345u;
  kiln_status status;
  TRY(make_param(rt, w1, 2, kInputs, &state, &m->params[0]));
  TRY(make_param(rt, b1, 1, kInputs, &state, &m->params[1]));
  TRY(make_param(rt, w2, 2, kHidden, &state, &m->params[2]));
  TRY(make_param(rt, b2, 1, kHidden, &state, &m->params[3]));
done:
  return status;
}

/* loss = cross_entropy(linear(relu(linear(x, w1, b1)), w2, b2), y) */
static kiln_status forward(kiln_runtime* rt, const mlp_ops* ops, const mlp_model* m, kiln_tensor* x, kiln_tensor* y,
                           kiln_tensor** loss) {
  kiln_tensor *pre = NULL, *hidden = NULL, *logits = NULL;
  kiln_tensor* args[3];
  kiln_status status;
  args[0] = x, args[1] = m->params[0], args[2] = m->params[1];
  TRY(kiln_op_call1(rt, ops->linear, args, 3, NULL, 0, &pre));
  TRY(kiln_op_call1(rt, ops->relu, &pre, 1, NULL, 0, &hidden));
  args[0] = hidden, args[1] = m->params[2], args[2] = m->params[3];
  TRY(kiln_op_call1(rt, ops->linear, args, 3, NULL, 0, &logits));
  args[0] = logits, args[1] = y;
  TRY(kiln_op_call1(rt, ops->cross_entropy, args, 2, NULL, 0, loss));
done:
  kiln_tensor_release(pre);
  kiln_tensor_release(hidden);
  kiln_tensor_release(logits);
  return status;
}

/* param <- param - lr * grad, as a fresh leaf (the caller runs this with
 * grad recording off, so the update itself is not part of any graph). */
static kiln_status sgd_update(kiln_runtime* rt, const mlp_ops* ops, kiln_tensor** param, float lr) {
  kiln_tensor *grad = NULL, *step = NULL, *updated = NULL;
  kiln_tensor* args[2];
  const kiln_attr scale = kiln_attr_float("value", lr);
  kiln_status status;
  TRY(kiln_tensor_grad(*param, &grad));
  if (!grad) goto done; /* the parameter took no part in the loss */
  TRY(kiln_op_call1(rt, ops->mul_scalar, &grad, 1, &scale, 1, &step));
  args[0] = *param, args[1] = step;
  TRY(kiln_op_call1(rt, ops->sub, args, 2, NULL, 0, &updated));
  TRY(kiln_tensor_set_requires_grad(updated, 1));
  kiln_tensor_release(*param);
  *param = updated;
  updated = NULL;
done:
  kiln_tensor_release(grad);
  kiln_tensor_release(step);
  kiln_tensor_release(updated);
  return status;
}

static kiln_status update_all(kiln_runtime* rt, const mlp_ops* ops, mlp_model* m, float lr) {
  kiln_status status = kiln_no_grad_begin(rt);
  int i;
  for (i = 0; i < kNumParams && status == KILN_OK; ++i) status = sgd_update(rt, ops, &m->params[i], lr);
  if (status == KILN_OK) return kiln_no_grad_end(rt);
  kiln_no_grad_end(rt); /* keep the first failure's status and message */
  return status;
}

kiln_status mlp_train(kiln_runtime* rt, int steps, float learning_rate, mlp_loss_fn on_loss, void* user_data,
                      mlp_summary* summary) {
  mlp_ops ops;
  mlp_model model = {{NULL, NULL, NULL, NULL}};
  kiln_tensor *x = NULL, *y = NULL, *loss = NULL;
  float value = 0.0f;
  int step, i;
  kiln_status status;
  summary->first_loss = summary->last_loss = 0.0f;
  TRY(find_ops(rt, &ops));
  TRY(make_data(rt, &x, &y));
  TRY(init_model(rt, &model));
  for (step = 0; step < steps; ++step) {
    TRY(forward(rt, &ops, &model, x, y, &loss));
    TRY(kiln_tensor_read(loss, &value, sizeof value));
    TRY(kiln_backward(rt, loss, NULL, 0));
    kiln_tensor_release(loss);
    loss = NULL;
    TRY(update_all(rt, &ops, &model, learning_rate));
    if (step == 0) summary->first_loss = value;
    summary->last_loss = value;
    if (on_loss) on_loss(step, value, user_data);
  }
done:
  kiln_tensor_release(loss);
  kiln_tensor_release(x);
  kiln_tensor_release(y);
  for (i = 0; i < kNumParams; ++i) kiln_tensor_release(model.params[i]);
  return status;
}
