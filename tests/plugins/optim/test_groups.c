/* Parameter groups, hyper-parameters read and set, parameters without a
 * gradient, zero_grad, and the configuration errors. */
#include <string.h>

#include "check.h"
#include "kiln_test_support.h"
#include "optim_support.h"
#include "references.h"

#define N_B 3

static const double b_init[N_B] = {1.5, -0.25, 0.75};

/* SGD over a (group 0: lr 0.1, momentum 0.9) and b, c (group 1: lr 0.01,
 * weight decay 0.1, momentum inherited); c never gets a gradient. */
static void check_groups(kiln_runtime* rt) {
  kiln_attr hyper0[2], hyper1[2];
  kiln_tensor *a = NULL, *b = NULL, *c = NULL, *grad = NULL;
  kiln_tensor* group1[2];
  kiln_optimizer* opt = NULL;
  sgd_options o0 = {0.1, 0.9, 0, 0, 0, 0}, o1 = {0.01, 0.9, 0, 0.1, 0, 0};
  double want_a[OPT_N], want_b[N_B], state_a[OPT_N], state_b[N_B], ga[OPT_N], gb[N_B], value = 0;
  int64_t step, steps = 0;
  size_t count = 0, i;
  memcpy(want_a, opt_init, sizeof want_a);
  memcpy(want_b, b_init, sizeof want_b);
  memset(state_a, 0, sizeof state_a);
  memset(state_b, 0, sizeof state_b);
  hyper0[0] = kiln_attr_float("lr", 0.1);
  hyper0[1] = kiln_attr_float("momentum", 0.9);
  hyper1[0] = kiln_attr_float("lr", 0.01);
  hyper1[1] = kiln_attr_float("weight_decay", 0.1);
  CHECK_OK(opt_param(rt, opt_init, OPT_N, &a));
  CHECK_OK(opt_param(rt, b_init, N_B, &b));
  CHECK_OK(opt_param(rt, b_init, N_B, &c));
  CHECK_OK(kiln_optimizer_create(rt, "SGD", &a, 1, hyper0, 2, &opt));
  group1[0] = b;
  group1[1] = c;
  CHECK_OK(kiln_optimizer_add_group(opt, group1, 2, hyper1, 2));
  CHECK_OK(kiln_optimizer_group_count(opt, &count));
  CHECK(count == 2);
  CHECK_OK(kiln_optimizer_get_hyper(opt, 1, "momentum", &value));
  CHECK(value == 0.9);
  CHECK_OK(kiln_optimizer_get_hyper(opt, 1, "lr", &value));
  CHECK(value == 0.01);
  CHECK_OK(kiln_optimizer_get_hyper(opt, 0, "weight_decay", &value));
  CHECK(value == 0);

  for (step = 1; step <= 6; ++step) {
    if (step == 4) {
      /* A new rate for group 0 from now on. */
      CHECK_OK(kiln_optimizer_set_hyper(opt, 0, "lr", 0.05));
      o0.lr = 0.05;
    }
    opt_grads(step, 0, ga, OPT_N);
    opt_grads(step, OPT_N, gb, N_B);
    CHECK_OK(opt_set_grad(rt, a, ga, OPT_N));
    CHECK_OK(opt_set_grad(rt, b, gb, N_B));
    CHECK_OK(kiln_optimizer_step(opt));
    opt_sgd_reference(&o0, step, want_a, ga, state_a, OPT_N);
    opt_sgd_reference(&o1, step, want_b, gb, state_b, N_B);
    CHECK(kts_compare_tensor("group 0", a, want_a, OPT_N, 1e-12, 1e-10) == 0);
    CHECK(kts_compare_tensor("group 1", b, want_b, N_B, 1e-12, 1e-10) == 0);
    CHECK(kts_compare_tensor("parameter without a gradient", c, b_init, N_B, 0, 0) == 0);
  }
  CHECK_OK(kiln_optimizer_step_count(opt, &steps));
  CHECK(steps == 6);
  /* c was never updated, so it has no state. */
  CHECK_OK(kiln_optimizer_state_count(opt, &count));
  for (i = 0; i < count; ++i) {
    const char* name = NULL;
    kiln_tensor* t = NULL;
    CHECK_OK(kiln_optimizer_state_get(opt, i, &name, &t));
    CHECK(name && strncmp(name, "2.", 2) != 0);
    kiln_tensor_release(t);
  }
  CHECK(count == 5); /* step, 0.step, 0.momentum_buffer, 1.step, 1.momentum_buffer */

  CHECK_OK(kiln_optimizer_zero_grad(opt));
  CHECK_OK(kiln_tensor_grad(a, &grad));
  CHECK(grad == NULL);
  /* A step without gradients counts and changes nothing. */
  CHECK_OK(kiln_optimizer_step(opt));
  CHECK(kts_compare_tensor("after a step without gradients", a, want_a, OPT_N, 0, 0) == 0);
  CHECK_OK(kiln_optimizer_step_count(opt, &steps));
  CHECK(steps == 7);

  /* A parameter belongs to one group only. */
  CHECK_ERROR(kiln_optimizer_add_group(opt, &a, 1, NULL, 0), KILN_ERR_INVALID_ARGUMENT, "optimizer 'SGD'",
              "params[0] is already parameter 0 (in group 0)");
  CHECK_ERROR(kiln_optimizer_add_group(opt, NULL, 0, NULL, 0), KILN_ERR_INVALID_ARGUMENT, "at least one parameter");
  CHECK_OK(kiln_optimizer_group_count(opt, &count));
  CHECK(count == 2);

  /* Hyper-parameters: numbers only, checked when set; nothing changes on failure. */
  CHECK_ERROR(kiln_optimizer_set_hyper(opt, 0, "lr", -1.0), KILN_ERR_INVALID_ARGUMENT, "optimizer 'SGD'",
              "lr must be >= 0, got -1");
  CHECK_OK(kiln_optimizer_get_hyper(opt, 0, "lr", &value));
  CHECK(value == 0.05);
  CHECK_ERROR(kiln_optimizer_set_hyper(opt, 0, "nesterov", 1.0), KILN_ERR_INVALID_ARGUMENT, "'nesterov'",
              "not a number");
  CHECK_ERROR(kiln_optimizer_get_hyper(opt, 0, "betas", &value), KILN_ERR_NOT_FOUND, "no hyper-parameter 'betas'",
              "lr, momentum, dampening, weight_decay");
  CHECK_ERROR(kiln_optimizer_get_hyper(opt, 2, "lr", &value), KILN_ERR_INVALID_ARGUMENT, "group 2 does not exist",
              "2 group(s)");
  kiln_optimizer_release(opt);
  kiln_tensor_release(a);
  kiln_tensor_release(b);
  kiln_tensor_release(c);
}

static void check_config_errors(kiln_runtime* rt) {
  const double one_beta[1] = {0.9}, beta_one[2] = {1.0, 0.9};
  const int64_t three = 3;
  kiln_tensor *p = NULL, *q = NULL, *ints = NULL;
  kiln_tensor* twice[2];
  kiln_optimizer* opt = NULL;
  kiln_attr h[3];
  CHECK_OK(opt_param(rt, opt_init, OPT_N, &p));
  CHECK_OK(opt_param(rt, opt_init, OPT_N, &q));
  CHECK_OK(kiln_tensor_zeros(rt, &three, 1, KILN_I64, KILN_DEVICE_CPU, 0, &ints));

  h[0] = kiln_attr_float("lr", 0.1);
  h[1] = kiln_attr_float("momentun", 0.9);
  CHECK_ERROR(kiln_optimizer_create(rt, "SGD", &p, 1, h, 2, &opt), KILN_ERR_INVALID_ARGUMENT,
              "unknown entry 'momentun'");
  h[0] = kiln_attr_float("lr", -0.1);
  CHECK_ERROR(kiln_optimizer_create(rt, "SGD", &p, 1, h, 1, &opt), KILN_ERR_INVALID_ARGUMENT, "optimizer 'SGD'",
              "lr must be >= 0, got -0.1");
  CHECK_ERROR(kiln_optimizer_create(rt, "Adam", &p, 1, h, 1, &opt), KILN_ERR_INVALID_ARGUMENT, "optimizer 'Adam'",
              "lr must be >= 0, got -0.1");
  h[0] = kiln_attr_float("lr", 0.1);
  h[1] = kiln_attr_bool("nesterov", 1);
  CHECK_ERROR(kiln_optimizer_create(rt, "SGD", &p, 1, h, 2, &opt), KILN_ERR_INVALID_ARGUMENT,
              "nesterov requires a momentum > 0 and zero dampening");
  h[2] = kiln_attr_float("momentum", 0.9);
  CHECK_OK(kiln_optimizer_create(rt, "SGD", &p, 1, h, 3, &opt));
  /* Taking the momentum away from a Nesterov group is refused too. */
  CHECK_ERROR(kiln_optimizer_set_hyper(opt, 0, "momentum", 0.0), KILN_ERR_INVALID_ARGUMENT, "nesterov requires");
  CHECK_ERROR(kiln_optimizer_set_hyper(opt, 0, "dampening", 0.1), KILN_ERR_INVALID_ARGUMENT, "nesterov requires");
  /* A second group inherits nesterov and momentum; with dampening it is refused. */
  h[0] = kiln_attr_float("dampening", 0.5);
  CHECK_ERROR(kiln_optimizer_add_group(opt, &q, 1, h, 1), KILN_ERR_INVALID_ARGUMENT, "nesterov requires");
  kiln_optimizer_release(opt);
  opt = NULL;

  h[0] = kiln_attr_floats("betas", one_beta, 1);
  CHECK_ERROR(kiln_optimizer_create(rt, "AdamW", &p, 1, h, 1, &opt), KILN_ERR_INVALID_ARGUMENT, "optimizer 'AdamW'",
              "betas must hold 2 numbers, got 1");
  h[0] = kiln_attr_floats("betas", beta_one, 2);
  CHECK_ERROR(kiln_optimizer_create(rt, "Adam", &p, 1, h, 1, &opt), KILN_ERR_INVALID_ARGUMENT,
              "betas[0] must be < 1, got 1");
  h[0] = kiln_attr_float("alpha", -0.5);
  CHECK_ERROR(kiln_optimizer_create(rt, "RMSprop", &p, 1, h, 1, &opt), KILN_ERR_INVALID_ARGUMENT,
              "alpha must be >= 0, got -0.5");
  h[0] = kiln_attr_float("lr_decay", -1.0);
  CHECK_ERROR(kiln_optimizer_create(rt, "Adagrad", &p, 1, h, 1, &opt), KILN_ERR_INVALID_ARGUMENT,
              "lr_decay must be >= 0, got -1");
  CHECK_ERROR(kiln_optimizer_create(rt, "Adamax", &p, 1, NULL, 0, &opt), KILN_ERR_NOT_FOUND, "Adamax");

  h[0] = kiln_attr_float("lr", 0.1);
  twice[0] = p;
  twice[1] = p;
  CHECK_ERROR(kiln_optimizer_create(rt, "SGD", twice, 2, h, 1, &opt), KILN_ERR_INVALID_ARGUMENT,
              "params[1] is params[0] again");
  CHECK_ERROR(kiln_optimizer_create(rt, "SGD", &ints, 1, h, 1, &opt), KILN_ERR_DTYPE_MISMATCH,
              "optimizers update floating-point tensors");
  CHECK_ERROR(kiln_optimizer_create(rt, "SGD", NULL, 0, h, 1, &opt), KILN_ERR_INVALID_ARGUMENT,
              "at least one parameter");
  CHECK(opt == NULL);
  kiln_tensor_release(ints);
  kiln_tensor_release(p);
  kiln_tensor_release(q);
}

int main(void) {
  kiln_runtime* rt = NULL;
  CHECK_OK(kts_runtime_create(1, &rt));
  check_groups(rt);
  check_config_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/optim/groups");
}
