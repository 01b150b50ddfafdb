/* The "single" strategy: rank 0 of 1, gradients left as they are, and its
 * arguments checked. Also the configuration checks every strategy gets. */
#include "check.h"

int main(void) {
  kiln_runtime* rt = NULL;
  kiln_strategy* s = NULL;
  kiln_tensor *w = NULL, *grad = NULL, *missing[2];
  const int64_t shape[1] = {3};
  float before[3] = {1, 2, 3}, after[3] = {0, 0, 0};
  int rank = -1, world = -1;
  kiln_attr unknown = kiln_attr_int("world", 2);

  CHECK_OK(kiln_runtime_create(NULL, &rt));
  CHECK_OK(kiln_strategy_create(rt, "single", NULL, 0, &s));
  CHECK_OK(kiln_strategy_rank(s, &rank, &world));
  CHECK(rank == 0 && world == 1);

  /* A parameter with a gradient: reducing leaves it as it is. */
  CHECK_OK(kiln_tensor_from_data(rt, before, sizeof before, shape, 1, KILN_F32, &w));
  CHECK_OK(kiln_tensor_set_requires_grad(w, 1));
  CHECK_OK(kiln_backward(rt, w, w, 0));
  CHECK_OK(kiln_strategy_reduce_gradients(s, &w, 1));
  CHECK_OK(kiln_tensor_grad(w, &grad));
  CHECK(grad != NULL);
  if (grad) CHECK_OK(kiln_tensor_read(grad, after, sizeof after));
  CHECK(after[0] == 1 && after[1] == 2 && after[2] == 3);
  CHECK_OK(kiln_strategy_reduce_gradients(s, NULL, 0));

  missing[0] = w;
  missing[1] = NULL;
  CHECK_ERROR(kiln_strategy_reduce_gradients(s, missing, 2), KILN_ERR_INVALID_ARGUMENT, "params[1] is NULL");
  CHECK_ERROR(kiln_strategy_reduce_gradients(s, NULL, 2), KILN_ERR_INVALID_ARGUMENT, "'params' is NULL");
  CHECK_ERROR(kiln_strategy_rank(NULL, &rank, &world), KILN_ERR_INVALID_ARGUMENT, "'s' is NULL");

  /* Configuration and lookup errors name the strategy, the entry and the choices. */
  kiln_strategy_release(s);
  s = NULL;
  CHECK_ERROR(kiln_strategy_create(rt, "single", &unknown, 1, &s), KILN_ERR_INVALID_ARGUMENT,
              "strategy 'single': unknown entry 'world'", "takes no entries");
  CHECK_ERROR(kiln_strategy_create(rt, "singel", NULL, 0, &s), KILN_ERR_NOT_FOUND, "unknown strategy 'singel'",
              "did you mean: single");
  CHECK(s == NULL);

  kiln_tensor_release(grad);
  kiln_tensor_release(w);
  kiln_runtime_release(rt);
  return check_report("plugins/strategy/single");
}
