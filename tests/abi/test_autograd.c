/* Autograd through the C API: gradients reach leaves, misuse of backward is
 * an error that says what happened, and no-grad scopes nest per thread. */
#include <stdint.h>

#include "check.h"

/* y = reshape(x, [1, 1]) for a one-element leaf x that requires grad. */
static kiln_status make_graph(kiln_runtime* rt, kiln_tensor** x, kiln_tensor** y) {
  const int64_t one[1] = {1}, one_by_one[2] = {1, 1};
  const kiln_op* reshape = NULL;
  kiln_attr attr = kiln_attr_ints("shape", one_by_one, 2);
  kiln_status status = kiln_tensor_full(rt, one, 1, 3.0, KILN_F32, KILN_DEVICE_CPU, 0, x);
  if (status == KILN_OK) status = kiln_tensor_set_requires_grad(*x, 1);
  if (status == KILN_OK) status = kiln_op_find(rt, "reshape", &reshape);
  if (status == KILN_OK) status = kiln_op_call1(rt, reshape, x, 1, &attr, 1, y);
  return status;
}

static void gradients_reach_leaves(kiln_runtime* rt) {
  kiln_tensor *x = NULL, *y = NULL, *grad = NULL, *detached = NULL;
  float g = 0.0f;
  int flag = -1;
  CHECK_OK(make_graph(rt, &x, &y));
  CHECK_OK(kiln_tensor_requires_grad(y, &flag));
  CHECK(flag == 1);
  CHECK_OK(kiln_tensor_grad(x, &grad));
  CHECK(grad == NULL); /* none before backward */
  CHECK_ERROR(kiln_tensor_set_requires_grad(y, 0), KILN_ERR_INVALID_STATE, "leaf");

  CHECK_OK(kiln_backward(rt, y, NULL, 0));
  CHECK_OK(kiln_tensor_grad(x, &grad));
  CHECK(grad != NULL);
  CHECK_OK(kiln_tensor_read(grad, &g, sizeof g));
  CHECK(g == 1.0f);
  kiln_tensor_release(grad);
  grad = NULL;

  CHECK_ERROR(kiln_backward(rt, y, NULL, 0), KILN_ERR_INVALID_STATE, "kiln_backward", "freed", "retain_graph");
  CHECK_OK(kiln_tensor_zero_grad(x));
  CHECK_OK(kiln_tensor_grad(x, &grad));
  CHECK(grad == NULL);

  CHECK_OK(kiln_tensor_detach(y, &detached));
  CHECK_OK(kiln_tensor_requires_grad(detached, &flag));
  CHECK(flag == 0);
  CHECK_ERROR(kiln_backward(rt, detached, NULL, 0), KILN_ERR_INVALID_STATE, "does not require grad");
  kiln_tensor_release(detached);
  kiln_tensor_release(y);
  kiln_tensor_release(x);
}

static void backward_needs_a_seed_for_many_elements(kiln_runtime* rt) {
  const int64_t shape[1] = {3};
  kiln_tensor* x = NULL;
  CHECK_OK(kiln_tensor_full(rt, shape, 1, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &x));
  CHECK_OK(kiln_tensor_set_requires_grad(x, 1));
  CHECK_ERROR(kiln_backward(rt, x, NULL, 0), KILN_ERR_INVALID_ARGUMENT, "3 elements");
  kiln_tensor_release(x);
}

static void no_grad_scopes_nest(kiln_runtime* rt) {
  kiln_tensor *x = NULL, *y = NULL;
  int enabled = -1, flag = -1;
  CHECK_OK(kiln_grad_enabled(rt, &enabled));
  CHECK(enabled == 1);
  CHECK_OK(kiln_no_grad_begin(rt));
  CHECK_OK(kiln_no_grad_begin(rt));
  CHECK_OK(kiln_grad_enabled(rt, &enabled));
  CHECK(enabled == 0);

  CHECK_OK(make_graph(rt, &x, &y)); /* recorded nothing */
  CHECK_OK(kiln_tensor_requires_grad(y, &flag));
  CHECK(flag == 0);
  CHECK_ERROR(kiln_backward(rt, y, NULL, 0), KILN_ERR_INVALID_STATE, "does not require grad");

  CHECK_OK(kiln_no_grad_end(rt));
  CHECK_OK(kiln_grad_enabled(rt, &enabled));
  CHECK(enabled == 0); /* the outer scope is still open */
  CHECK_OK(kiln_no_grad_end(rt));
  CHECK_OK(kiln_grad_enabled(rt, &enabled));
  CHECK(enabled == 1);
  CHECK_ERROR(kiln_no_grad_end(rt), KILN_ERR_INVALID_STATE, "kiln_no_grad_end", "no open no-grad scope");
  kiln_tensor_release(y);
  kiln_tensor_release(x);
}

static void no_grad_scopes_belong_to_one_runtime(kiln_runtime* rt) {
  kiln_runtime* other = NULL;
  int enabled = -1;
  CHECK_OK(kiln_runtime_create(NULL, &other));
  CHECK_OK(kiln_no_grad_begin(other));
  CHECK_OK(kiln_grad_enabled(rt, &enabled));
  CHECK(enabled == 1);
  CHECK_ERROR(kiln_no_grad_end(rt), KILN_ERR_INVALID_STATE, "no open no-grad scope");
  CHECK_OK(kiln_no_grad_end(other));
  kiln_runtime_release(other);
}

int main(void) {
  kiln_runtime* rt = NULL;
  if (kiln_runtime_create(NULL, &rt) != KILN_OK) {
    fprintf(stderr, "setup failed: %s\n", kiln_last_error());
    return 1;
  }
  gradients_reach_leaves(rt);
  backward_needs_a_seed_for_many_elements(rt);
  no_grad_scopes_nest(rt);
  no_grad_scopes_belong_to_one_runtime(rt);
  kiln_runtime_release(rt);
  return check_report("abi/autograd");
}
