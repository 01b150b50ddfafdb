/* Training with the plugin's pieces on a fixed problem: a model
 * swish(x * w, beta), w a parameter of its own (one weight per feature) and
 * beta the Swish layer's, fitted with Lion to targets made by the same
 * model with other values. The loss must fall by a clear margin. */
#include "plugin_checks.h"

enum { ROWS = 32, FEATURES = 4, STEPS = 60 };
/* Lion moves every weight by lr per step, so it settles only as lr goes:
 * lr falls linearly from this to 0 over the steps. */
static const double start_lr = 0.05;

static const double true_w[FEATURES] = {0.8, -0.5, 1.2, 0.3};
static const double true_beta = 2.0;

static void make_problem(float* x, float* target) {
  for (int i = 0; i < ROWS; ++i)
    for (int j = 0; j < FEATURES; ++j) {
      const double xij = 2.0 * sin(0.7 * i + 1.3 * j);
      const double z = xij * true_w[j];
      x[i * FEATURES + j] = (float)xij;
      target[i * FEATURES + j] = (float)(z / (1.0 + exp(-true_beta * z)));
    }
}

/* One step: forward, loss, backward, update. Returns the loss before the
 * update (NAN when a call failed). */
static double train_step(kiln_runtime* rt, kiln_module* layer, kiln_optimizer* opt, kiln_tensor* x, kiln_tensor* w,
                         kiln_tensor* target) {
  kiln_tensor *pred = NULL, *loss = NULL;
  double value = NAN;
  CHECK_OK(kiln_optimizer_zero_grad(opt));
  kiln_tensor* scale_args[2] = {x, w};
  kiln_tensor* scaled = call_op(rt, "mul", scale_args, 2, NULL, 0);
  if (scaled) CHECK_OK(kiln_module_forward1(layer, &scaled, 1, &pred));
  kiln_tensor* loss_args[2] = {pred, target};
  if (pred) loss = call_op(rt, "mse_loss", loss_args, 2, NULL, 0);
  if (loss) {
    value = scalar_of(loss);
    CHECK_OK(kiln_backward(rt, loss, NULL, 0));
    CHECK_OK(kiln_optimizer_step(opt));
  }
  kiln_tensor_release(loss);
  kiln_tensor_release(pred);
  kiln_tensor_release(scaled);
  return value;
}

int check_training(kiln_runtime* rt) {
  float x_data[ROWS * FEATURES], target_data[ROWS * FEATURES];
  const float w_start[FEATURES] = {0.1f, 0.1f, 0.1f, 0.1f};
  const int64_t data_shape[2] = {ROWS, FEATURES}, w_shape[1] = {FEATURES};
  /* beta2 0.9, not the default 0.99: a momentum that remembers ~100 steps
   * would carry the first steps' gradients through this whole short run. */
  const double betas[2] = {0.9, 0.9};
  const kiln_attr hyper[2] = {kiln_attr_float("lr", start_lr), kiln_attr_floats("betas", betas, 2)};
  kiln_module* layer = NULL;
  kiln_optimizer* opt = NULL;
  kiln_tensor* params[2] = {NULL, NULL};
  const char* beta_name = NULL;
  double first = NAN, last = NAN;

  make_problem(x_data, target_data);
  kiln_tensor* x = make_f32(rt, x_data, data_shape, 2);
  kiln_tensor* target = make_f32(rt, target_data, data_shape, 2);
  params[0] = make_f32(rt, w_start, w_shape, 1);
  if (params[0]) CHECK_OK(kiln_tensor_set_requires_grad(params[0], 1));
  CHECK_OK(kiln_module_create(rt, "Swish", NULL, 0, &layer));
  if (layer) CHECK_OK(kiln_module_parameter(layer, 0, &beta_name, &params[1]));
  if (params[0] && params[1]) CHECK_OK(kiln_optimizer_create(rt, "Lion", params, 2, hyper, 2, &opt));

  for (int step = 0; opt && step < STEPS; ++step) {
    CHECK_OK(kiln_optimizer_set_hyper(opt, 0, "lr", start_lr * (STEPS - step) / STEPS));
    const double loss = train_step(rt, layer, opt, x, params[0], target);
    if (step == 0) first = loss;
    last = loss;
    if (step % 10 == 0 || step == STEPS - 1) printf("  training step %2d: loss %.6f\n", step, loss);
    if (isnan(loss)) break;
  }
  printf("  training: loss %.6f -> %.6f, beta %.4f (targets made with %.1f)\n", first, last, scalar_of(params[1]),
         true_beta);
  CHECK(first > 0.05);        /* the starting point is clearly off */
  CHECK(last < 0.01 * first); /* and training got most of the way */

  kiln_optimizer_release(opt);
  kiln_module_release(layer);
  kiln_tensor_release(params[0]);
  kiln_tensor_release(params[1]);
  kiln_tensor_release(x);
  kiln_tensor_release(target);
  return check_failures;
}
