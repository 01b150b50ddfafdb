/* The "zero1" strategy in one process (rank 0 of 1 owns everything) and the
 * errors of the calls that serve it: its configuration, attaching to a
 * second model, kiln_strategy_optimizer_step and kiln_strategy_state_owner
 * with bad arguments. Its work over several ranks is tested in
 * tests/dist/test_zero1.c. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>

#include "check.h"

static kiln_module* make_linear(kiln_runtime* rt) {
  const kiln_attr config[2] = {kiln_attr_int("in_features", 3), kiln_attr_int("out_features", 2)};
  kiln_module* m = NULL;
  CHECK_OK(kiln_module_create(rt, "Linear", config, 2, &m));
  return m;
}

/* Gives `w` the gradient of sum(w), ones. */
static void ones_gradient(kiln_runtime* rt, kiln_tensor* w) {
  const kiln_op* sum = NULL;
  kiln_tensor* total = NULL;
  CHECK_OK(kiln_op_find(rt, "sum", &sum));
  CHECK_OK(kiln_op_call1(rt, sum, &w, 1, NULL, 0, &total));
  CHECK_OK(kiln_backward(rt, total, NULL, 0));
  kiln_tensor_release(total);
}

int main(void) {
  kiln_runtime *rt = NULL, *other_rt = NULL;
  kiln_strategy *zero1 = NULL, *single = NULL;
  kiln_module *model = NULL, *second = NULL;
  kiln_optimizer *opt = NULL, *other_opt = NULL;
  kiln_tensor *weight = NULL, *bias = NULL, *loose = NULL, *foreign = NULL;
  const char* name = NULL;
  const kiln_attr no_buckets = kiln_attr_float("bucket_mb", 0.0);
  const kiln_attr lr = kiln_attr_float("lr", 0.5);
  const int64_t shape[1] = {2};
  float before[6], after[6];
  int rank = -1, world = -1, owner = 7;
  size_t i;

  /* A job of one process, as `kiln launch --nproc-per-node 1` starts it. */
  setenv("RANK", "0", 1);
  setenv("WORLD_SIZE", "1", 1);
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  CHECK_OK(kiln_runtime_create(NULL, &other_rt));
  CHECK_ERROR(kiln_strategy_create(rt, "zero1", &no_buckets, 1, &zero1), KILN_ERR_INVALID_ARGUMENT,
              "zero1: bucket_mb must be positive, got 0");
  CHECK(zero1 == NULL);
  CHECK_OK(kiln_strategy_create(rt, "zero1", NULL, 0, &zero1));
  CHECK_OK(kiln_strategy_create(rt, "single", NULL, 0, &single));
  CHECK_OK(kiln_strategy_rank(zero1, &rank, &world));
  CHECK(rank == 0 && world == 1);

  model = make_linear(rt);
  second = make_linear(rt);
  CHECK_OK(kiln_module_parameter(model, 0, &name, &weight));
  CHECK_OK(kiln_module_parameter(model, 1, &name, &bias));
  CHECK_OK(kiln_tensor_zeros(rt, shape, 1, KILN_F32, KILN_DEVICE_CPU, 0, &loose));
  CHECK_OK(kiln_tensor_zeros(other_rt, shape, 1, KILN_F32, KILN_DEVICE_CPU, 0, &foreign));

  /* Before attaching nothing is shared out; after it rank 0 of 1 owns all. */
  CHECK_OK(kiln_strategy_state_owner(zero1, weight, &owner));
  CHECK(owner == -1);
  CHECK_OK(kiln_strategy_attach(zero1, model));
  CHECK_OK(kiln_strategy_attach(zero1, model)); /* again with the same model: nothing to do */
  CHECK_ERROR(kiln_strategy_attach(zero1, second), KILN_ERR_INVALID_STATE, "zero1: already attached to another model");
  CHECK_OK(kiln_strategy_state_owner(zero1, weight, &owner));
  CHECK(owner == 0);
  CHECK_OK(kiln_strategy_state_owner(zero1, bias, &owner));
  CHECK(owner == 0);
  CHECK_OK(kiln_strategy_state_owner(zero1, loose, &owner)); /* not a parameter of the model */
  CHECK(owner == -1);
  CHECK_OK(kiln_strategy_state_owner(single, weight, &owner)); /* a strategy that shards nothing */
  CHECK(owner == -1);
  CHECK_ERROR(kiln_strategy_state_owner(zero1, foreign, &owner), KILN_ERR_INVALID_ARGUMENT,
              "'param' belongs to another runtime");
  CHECK_ERROR(kiln_strategy_state_owner(zero1, NULL, &owner), KILN_ERR_INVALID_ARGUMENT, "'param' is NULL");
  CHECK_ERROR(kiln_strategy_state_owner(NULL, weight, &owner), KILN_ERR_INVALID_ARGUMENT, "'s' is NULL");

  /* One rank owns every parameter: the step is the optimizer's own. */
  CHECK_OK(kiln_optimizer_create(rt, "SGD", &weight, 1, &lr, 1, &opt));
  CHECK_OK(kiln_tensor_read(weight, before, sizeof before));
  ones_gradient(rt, weight);
  CHECK_OK(kiln_strategy_optimizer_step(zero1, opt));
  CHECK_OK(kiln_tensor_read(weight, after, sizeof after));
  for (i = 0; i < 6; ++i) CHECK(after[i] == before[i] - 0.5f);
  CHECK_OK(kiln_optimizer_zero_grad(opt));
  ones_gradient(rt, weight);
  CHECK_OK(kiln_strategy_optimizer_step(single, opt)); /* a strategy without the step's hooks just steps */
  CHECK_OK(kiln_tensor_read(weight, before, sizeof before));
  for (i = 0; i < 6; ++i) CHECK(before[i] == after[i] - 0.5f);

  CHECK_OK(kiln_optimizer_create(other_rt, "SGD", &foreign, 1, &lr, 1, &other_opt));
  CHECK_ERROR(kiln_strategy_optimizer_step(zero1, other_opt), KILN_ERR_INVALID_ARGUMENT,
              "'opt' belongs to another runtime than the strategy");
  CHECK_ERROR(kiln_strategy_optimizer_step(zero1, NULL), KILN_ERR_INVALID_ARGUMENT, "'opt' is NULL");
  CHECK_ERROR(kiln_strategy_optimizer_step(NULL, opt), KILN_ERR_INVALID_ARGUMENT, "'s' is NULL");

  kiln_optimizer_release(other_opt);
  kiln_optimizer_release(opt);
  kiln_tensor_release(foreign);
  kiln_tensor_release(loose);
  kiln_tensor_release(bias);
  kiln_tensor_release(weight);
  kiln_strategy_release(single);
  kiln_strategy_release(zero1);
  kiln_module_release(second);
  kiln_module_release(model);
  kiln_runtime_release(other_rt);
  kiln_runtime_release(rt);
  return check_report("plugins/strategy/zero1");
}
