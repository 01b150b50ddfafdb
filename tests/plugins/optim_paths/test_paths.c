/* The two update paths of kiln-optim's fused optimizers give the same bits:
 * a group update (one call per group, parameters bucketed by device, dtype
 * and step count) and the per-parameter update the host falls back to when
 * a type has no update_group. And an optimizer type sized before
 * update_group existed is accepted and updated parameter by parameter. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define N_PARAMS 4
#define STEPS 4

static const int64_t sizes[N_PARAMS] = {7, 1, 300, 33};

/* Replaces the gradient of `p` (f32 [n]) with `grad`: the loss sum(p * grad). */
static void set_grad(kiln_runtime* rt, kiln_tensor* p, const float* grad, int64_t n) {
  const kiln_op *mul = NULL, *sum = NULL;
  kiln_tensor *c = NULL, *product = NULL, *loss = NULL;
  kiln_tensor* args[2];
  CHECK_OK(kiln_tensor_zero_grad(p));
  CHECK_OK(kiln_op_find(rt, "mul", &mul));
  CHECK_OK(kiln_op_find(rt, "sum", &sum));
  CHECK_OK(kiln_tensor_from_data(rt, grad, (size_t)n * sizeof(float), &n, 1, KILN_F32, &c));
  args[0] = p;
  args[1] = c;
  CHECK_OK(kiln_op_call1(rt, mul, args, 2, NULL, 0, &product));
  CHECK_OK(kiln_op_call1(rt, sum, &product, 1, NULL, 0, &loss));
  CHECK_OK(kiln_backward(rt, loss, NULL, 0));
  kiln_tensor_release(loss);
  kiln_tensor_release(product);
  kiln_tensor_release(c);
}

static float value_at(int step, int param, int64_t i) {
  return (float)(((step * 7 + param * 13 + i * 5) % 23) - 11) / 8.0f;
}

static void make_params(kiln_runtime* rt, kiln_tensor** params) {
  int k;
  for (k = 0; k < N_PARAMS; ++k) {
    float* values = malloc((size_t)sizes[k] * sizeof(float));
    int64_t i;
    for (i = 0; i < sizes[k]; ++i) values[i] = value_at(0, k, i);
    CHECK_OK(kiln_tensor_from_data(rt, values, (size_t)sizes[k] * sizeof(float), &sizes[k], 1, KILN_F32, &params[k]));
    CHECK_OK(kiln_tensor_set_requires_grad(params[k], 1));
    free(values);
  }
}

/* Gradients of step `step`; parameter 2 gets none at step 1, so its step
 * count lags the others' and the group call holds two step buckets. */
static void set_grads(kiln_runtime* rt, kiln_tensor** params, int step) {
  int k;
  for (k = 0; k < N_PARAMS; ++k) {
    float* grad = malloc((size_t)sizes[k] * sizeof(float));
    int64_t i;
    for (i = 0; i < sizes[k]; ++i) grad[i] = value_at(step, k, i);
    if (step == 1 && k == 2) CHECK_OK(kiln_tensor_zero_grad(params[k]));
    else set_grad(rt, params[k], grad, sizes[k]);
    free(grad);
  }
}

static int same_bits(const kiln_tensor* a, const kiln_tensor* b, int64_t n) {
  float* va = malloc((size_t)n * sizeof(float));
  float* vb = malloc((size_t)n * sizeof(float));
  int same = kiln_tensor_read(a, va, (size_t)n * sizeof(float)) == KILN_OK &&
             kiln_tensor_read(b, vb, (size_t)n * sizeof(float)) == KILN_OK &&
             memcmp(va, vb, (size_t)n * sizeof(float)) == 0;
  free(va);
  free(vb);
  return same;
}

/* Runs `type` and "<type>/per-parameter" side by side, two groups (the
 * second with half the learning rate), and compares every parameter's bits
 * after each step. */
static void check_paths(kiln_runtime* rt, const char* type, const kiln_attr* hyper, size_t n_hyper) {
  kiln_tensor *grouped[N_PARAMS], *single[N_PARAMS];
  kiln_optimizer *group_opt = NULL, *param_opt = NULL;
  char per_parameter[64];
  int step, k;
  make_params(rt, grouped);
  make_params(rt, single);
  strcpy(per_parameter, type);
  strcat(per_parameter, "/per-parameter");
  CHECK_OK(kiln_optimizer_create(rt, type, grouped, 3, hyper, n_hyper, &group_opt));
  CHECK_OK(kiln_optimizer_create(rt, per_parameter, single, 3, hyper, n_hyper, &param_opt));
  CHECK_OK(kiln_optimizer_add_group(group_opt, &grouped[3], 1, NULL, 0));
  CHECK_OK(kiln_optimizer_add_group(param_opt, &single[3], 1, NULL, 0));
  CHECK_OK(kiln_optimizer_set_hyper(group_opt, 1, "lr", 0.005));
  CHECK_OK(kiln_optimizer_set_hyper(param_opt, 1, "lr", 0.005));
  for (step = 1; step <= STEPS; ++step) {
    set_grads(rt, grouped, step);
    set_grads(rt, single, step);
    CHECK_OK(kiln_optimizer_step(group_opt));
    CHECK_OK(kiln_optimizer_step(param_opt));
    for (k = 0; k < N_PARAMS; ++k) {
      if (!same_bits(grouped[k], single[k], sizes[k])) {
        fprintf(stderr, "%s: parameter %d differs between the paths after step %d\n", type, k, step);
        ++check_failures;
      }
    }
  }
  /* The parameters moved at all (the comparison is not of untouched values). */
  {
    float only; /* parameter 1 holds one value */
    CHECK_OK(kiln_tensor_read(grouped[1], &only, sizeof only));
    CHECK(only != value_at(0, 1, 0));
  }
  kiln_optimizer_release(group_opt);
  kiln_optimizer_release(param_opt);
  for (k = 0; k < N_PARAMS; ++k) {
    kiln_tensor_release(grouped[k]);
    kiln_tensor_release(single[k]);
  }
}

static void check_legacy_type(kiln_runtime* rt) {
  const double start[3] = {1.0, -2.0, 0.5};
  const float grad[3] = {0.5f, 1.0f, -4.0f};
  const int64_t n = 3;
  float got[3];
  kiln_tensor* p = NULL;
  kiln_optimizer* opt = NULL;
  const kiln_attr lr = kiln_attr_float("lr", 0.25);
  float values[3];
  int64_t steps = 0;
  int i;
  for (i = 0; i < 3; ++i) values[i] = (float)start[i];
  CHECK_OK(kiln_tensor_from_data(rt, values, sizeof values, &n, 1, KILN_F32, &p));
  CHECK_OK(kiln_tensor_set_requires_grad(p, 1));
  CHECK_OK(kiln_optimizer_create(rt, "LegacySGD", &p, 1, &lr, 1, &opt));
  set_grad(rt, p, grad, n);
  CHECK_OK(kiln_optimizer_step(opt));
  CHECK_OK(kiln_optimizer_step_count(opt, &steps));
  CHECK(steps == 1);
  CHECK_OK(kiln_tensor_read(p, got, sizeof got));
  for (i = 0; i < 3; ++i) CHECK(got[i] == (float)start[i] - 0.25f * grad[i]);
  kiln_optimizer_release(opt);
  kiln_tensor_release(p);
}

/* With AMSGrad's state tensor never made, both paths refuse the update,
 * naming what is missing, and the step counts stay. */
static void check_too_little_state(kiln_runtime* rt) {
  const kiln_attr hyper[1] = {kiln_attr_bool("amsgrad", 1)};
  const char* types[2] = {"Adam", "Adam/per-parameter"};
  int t;
  for (t = 0; t < 2; ++t) {
    kiln_tensor* params[N_PARAMS];
    kiln_optimizer* opt = NULL;
    int64_t steps = -1;
    int k;
    make_params(rt, params);
    CHECK_OK(kiln_optimizer_create(rt, types[t], params, N_PARAMS, hyper, 1, &opt));
    set_grads(rt, params, 2);
    CHECK_ERROR(kiln_optimizer_step(opt), KILN_ERR_INVALID_STATE, "2 state tensors, fewer than the 3",
                "loaded from another optimizer type");
    CHECK_OK(kiln_optimizer_step_count(opt, &steps));
    CHECK(steps == 0);
    kiln_optimizer_release(opt);
    for (k = 0; k < N_PARAMS; ++k) kiln_tensor_release(params[k]);
  }
}

static kiln_runtime* runtime_with(const char* plugin) {
  const char* plugins[1];
  kiln_runtime_options options;
  kiln_runtime* rt = NULL;
  plugins[0] = plugin;
  memset(&options, 0, sizeof options);
  options.size = sizeof options;
  options.num_threads = 2;
  options.plugin_paths = plugins;
  options.n_plugin_paths = 1;
  options.skip_default_plugins = 1;
  CHECK_OK(kiln_runtime_create(&options, &rt));
  return rt;
}

int main(int argc, char** argv) {
  kiln_runtime* rt = NULL;
  if (argc > 1 && strcmp(argv[1], "short_state") == 0) {
    rt = runtime_with(SHORT_STATE_PLUGIN);
    if (rt) check_too_little_state(rt);
    kiln_runtime_release(rt);
    return check_report("plugins/optim_paths/too_little_state");
  }
  rt = runtime_with(PATHS_PLUGIN);
  if (!rt) return check_report("plugins/optim_paths");
  {
    const kiln_attr sgd[4] = {kiln_attr_float("lr", 0.01), kiln_attr_float("momentum", 0.9),
                              kiln_attr_bool("nesterov", 1), kiln_attr_float("weight_decay", 1e-3)};
    const kiln_attr sgd_plain[2] = {kiln_attr_float("lr", 0.01), kiln_attr_bool("maximize", 1)};
    const kiln_attr adam[2] = {kiln_attr_float("lr", 0.01), kiln_attr_bool("amsgrad", 1)};
    const kiln_attr adamw[2] = {kiln_attr_float("lr", 0.01), kiln_attr_float("weight_decay", 0.1)};
    check_paths(rt, "SGD", sgd, 4);
    check_paths(rt, "SGD", sgd_plain, 2);
    check_paths(rt, "Adam", adam, 2);
    check_paths(rt, "AdamW", adamw, 2);
  }
  check_legacy_type(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/optim_paths");
}
