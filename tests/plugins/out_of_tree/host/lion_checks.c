/* The optimizer "Lion": two steps against values worked out by hand, its
 * default hyper-parameters, and bad ones. */
#include <string.h>

#include "plugin_checks.h"

enum { N = 4 };
static const int64_t shape[1] = {N};

/* Gives `param` the gradient `grad` (through loss = sum(param * grad)). */
static void set_gradient(kiln_runtime* rt, kiln_tensor* param, const double* grad) {
  kiln_tensor* g = make_f64(rt, grad, shape, 1);
  kiln_tensor* product_args[2] = {param, g};
  kiln_tensor* product = call_op(rt, "mul", product_args, 2, NULL, 0);
  kiln_tensor* loss = call_op(rt, "sum", &product, 1, NULL, 0);
  CHECK_OK(kiln_tensor_zero_grad(param));
  if (loss) CHECK_OK(kiln_backward(rt, loss, NULL, 0));
  kiln_tensor_release(loss);
  kiln_tensor_release(product);
  kiln_tensor_release(g);
}

/* The optimizer's state "0.exp_avg" (a copy); NULL when it has none. */
static kiln_tensor* exp_avg_of(kiln_optimizer* opt) {
  size_t count = 0;
  CHECK_OK(kiln_optimizer_state_count(opt, &count));
  for (size_t i = 0; i < count; ++i) {
    const char* name = NULL;
    kiln_tensor* t = NULL;
    CHECK_OK(kiln_optimizer_state_get(opt, i, &name, &t));
    if (name && strcmp(name, "0.exp_avg") == 0) return t;
    kiln_tensor_release(t);
  }
  fprintf(stderr, "Lion: no state \"0.exp_avg\" among %zu entries\n", count);
  CHECK(!"Lion has the state 0.exp_avg");
  return NULL;
}

static void check_against(kiln_optimizer* opt, kiln_tensor* param, const double* want_param,
                          const double* want_exp_avg, const char* step) {
  char what[64];
  snprintf(what, sizeof what, "Lion parameter after %s", step);
  check_elements(param, want_param, N, 1e-12, 1e-12, what);
  kiln_tensor* exp_avg = exp_avg_of(opt);
  snprintf(what, sizeof what, "Lion exp_avg after %s", step);
  check_elements(exp_avg, want_exp_avg, N, 1e-12, 1e-12, what);
  kiln_tensor_release(exp_avg);
}

/* lr 0.1, betas (0.9, 0.99), weight_decay 0.5: p is scaled by
 * 1 - 0.1 * 0.5 = 0.95 before the signed step of 0.1. */
static void check_two_steps(kiln_runtime* rt) {
  const double p0[N] = {0.5, -1.0, 2.0, 0.25};
  const double g1[N] = {1.0, -2.0, 0.0, 0.5};
  /* m0 = 0, so the update is sign(0.1 * g1) = (1, -1, 0, 1). */
  const double p1[N] = {0.475 - 0.1, -0.95 + 0.1, 1.9, 0.2375 - 0.1};
  const double m1[N] = {0.01, -0.02, 0.0, 0.005}; /* 0.01 * g1 */
  const double g2[N] = {-3.0, 0.5, 1.0, -0.01};
  /* 0.9 * m1 + 0.1 * g2 = (-0.291, 0.032, 0.1, 0.0035): the last element
   * follows the momentum against its own gradient. Update (-1, 1, 1, 1). */
  const double p2[N] = {0.35625 + 0.1, -0.8075 - 0.1, 1.805 - 0.1, 0.130625 - 0.1};
  const double m2[N] = {0.0099 - 0.03, -0.0198 + 0.005, 0.01, 0.00495 - 0.0001}; /* 0.99 m1 + 0.01 g2 */
  const double betas[2] = {0.9, 0.99};
  const kiln_attr hyper[3] = {kiln_attr_float("lr", 0.1), kiln_attr_floats("betas", betas, 2),
                              kiln_attr_float("weight_decay", 0.5)};
  kiln_optimizer* opt = NULL;
  kiln_tensor* param = make_f64(rt, p0, shape, 1);
  CHECK_OK(kiln_tensor_set_requires_grad(param, 1));
  CHECK_OK(kiln_optimizer_create(rt, "Lion", &param, 1, hyper, 3, &opt));
  if (opt) {
    set_gradient(rt, param, g1);
    CHECK_OK(kiln_optimizer_step(opt));
    check_against(opt, param, p1, m1, "step 1");
    set_gradient(rt, param, g2);
    CHECK_OK(kiln_optimizer_step(opt));
    check_against(opt, param, p2, m2, "step 2");
  }
  kiln_optimizer_release(opt);
  kiln_tensor_release(param);
}

static void check_defaults(kiln_runtime* rt) {
  const double p0[N] = {1, 2, 3, 4};
  kiln_optimizer* opt = NULL;
  double lr = 0, weight_decay = -1;
  kiln_tensor* param = make_f64(rt, p0, shape, 1);
  CHECK_OK(kiln_tensor_set_requires_grad(param, 1));
  CHECK_OK(kiln_optimizer_create(rt, "Lion", &param, 1, NULL, 0, &opt));
  if (opt) {
    CHECK_OK(kiln_optimizer_get_hyper(opt, 0, "lr", &lr));
    CHECK_OK(kiln_optimizer_get_hyper(opt, 0, "weight_decay", &weight_decay));
  }
  CHECK(lr == 1e-4);
  CHECK(weight_decay == 0.0);
  kiln_optimizer_release(opt);
  kiln_tensor_release(param);
}

/* Creates Lion with `betas` and takes a step, which must fail saying `why`. */
static void check_refused_betas(kiln_runtime* rt, const double* betas, size_t n, const char* why) {
  const double p0[N] = {1, 2, 3, 4}, g[N] = {1, 1, 1, 1};
  const kiln_attr hyper = kiln_attr_floats("betas", betas, n);
  kiln_optimizer* opt = NULL;
  kiln_tensor* param = make_f64(rt, p0, shape, 1);
  CHECK_OK(kiln_tensor_set_requires_grad(param, 1));
  CHECK_OK(kiln_optimizer_create(rt, "Lion", &param, 1, &hyper, 1, &opt));
  set_gradient(rt, param, g);
  if (opt) CHECK_ERROR(kiln_optimizer_step(opt), KILN_ERR_INVALID_ARGUMENT, "Lion", why);
  check_elements(param, p0, N, 0, 0, "parameter after a refused Lion step");
  kiln_optimizer_release(opt);
  kiln_tensor_release(param);
}

int check_lion(kiln_runtime* rt) {
  const double three[3] = {0.9, 0.99, 0.999}, too_large[2] = {0.9, 1.5};
  check_two_steps(rt);
  check_defaults(rt);
  check_refused_betas(rt, three, 3, "betas must hold two numbers (beta1, beta2), got 3");
  check_refused_betas(rt, too_large, 2, "betas must lie in [0, 1), got [0.9, 1.5]");
  return check_failures;
}
