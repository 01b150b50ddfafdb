/* Autocast through the C API: scopes nest per runtime, a bad dtype or an
 * unmatched end is an error that names it, and a product under bf16 gives
 * a bf16 result while the f32 weight's gradient stays f32. */
#include <stdint.h>

#include "check.h"

static kiln_dtype current(kiln_runtime* rt) {
  kiln_dtype d = KILN_I32;
  CHECK_OK(kiln_autocast_dtype(rt, &d));
  return d;
}

static void scopes_nest(kiln_runtime* rt, kiln_runtime* other) {
  CHECK(current(rt) == KILN_F32);
  CHECK_OK(kiln_autocast_begin(rt, KILN_BF16));
  CHECK(current(rt) == KILN_BF16);
  CHECK(current(other) == KILN_F32); /* runtimes share nothing */
  CHECK_OK(kiln_autocast_begin(rt, KILN_F16));
  CHECK(current(rt) == KILN_F16);
  CHECK_OK(kiln_autocast_end(rt));
  CHECK(current(rt) == KILN_BF16);
  CHECK_OK(kiln_autocast_end(rt));
  CHECK(current(rt) == KILN_F32);
  CHECK_ERROR(kiln_autocast_end(rt), KILN_ERR_INVALID_STATE, "kiln_autocast_end", "no open autocast scope");
}

static void bad_arguments(kiln_runtime* rt) {
  CHECK_ERROR(kiln_autocast_begin(rt, KILN_F32), KILN_ERR_INVALID_ARGUMENT, "kiln_autocast_begin", "f32",
              "KILN_BF16 or KILN_F16");
  CHECK_ERROR(kiln_autocast_begin(rt, KILN_I64), KILN_ERR_INVALID_ARGUMENT, "i64");
  CHECK_ERROR(kiln_autocast_begin(rt, (kiln_dtype)42), KILN_ERR_INVALID_ARGUMENT, "42");
  CHECK_ERROR(kiln_autocast_begin(NULL, KILN_BF16), KILN_ERR_INVALID_ARGUMENT, "'rt'");
  CHECK_ERROR(kiln_autocast_end(NULL), KILN_ERR_INVALID_ARGUMENT, "'rt'");
  CHECK_ERROR(kiln_autocast_dtype(rt, NULL), KILN_ERR_INVALID_ARGUMENT, "'out'");
  CHECK(current(rt) == KILN_F32); /* nothing was opened by the failures */
}

/* linear(x, w) under bf16: the output is bf16, w's gradient f32. A CPU
 * without bf16 support refuses with a message saying so. */
static void linear_runs_low(kiln_runtime* rt) {
  const int64_t x_shape[2] = {2, 4}, w_shape[2] = {3, 4};
  const kiln_op *linear = NULL, *sum = NULL;
  kiln_tensor *x = NULL, *w = NULL, *y = NULL, *loss = NULL, *grad = NULL;
  kiln_dtype d = KILN_I32;
  kiln_status status;
  float g[12];
  int i;
  CHECK_OK(kiln_op_find(rt, "linear", &linear));
  CHECK_OK(kiln_op_find(rt, "sum", &sum));
  CHECK_OK(kiln_tensor_full(rt, x_shape, 2, 0.5, KILN_F32, KILN_DEVICE_CPU, 0, &x));
  CHECK_OK(kiln_tensor_full(rt, w_shape, 2, 0.25, KILN_F32, KILN_DEVICE_CPU, 0, &w));
  CHECK_OK(kiln_tensor_set_requires_grad(w, 1));
  CHECK_OK(kiln_autocast_begin(rt, KILN_BF16));
  {
    kiln_tensor* inputs[2];
    inputs[0] = x;
    inputs[1] = w;
    status = kiln_op_call1(rt, linear, inputs, 2, NULL, 0, &y);
  }
  if (status == KILN_OK) {
    CHECK_OK(kiln_tensor_dtype(y, &d));
    CHECK(d == KILN_BF16);
    CHECK_OK(kiln_op_call1(rt, sum, &y, 1, NULL, 0, &loss));
    CHECK_OK(kiln_tensor_dtype(loss, &d));
    CHECK(d == KILN_F32); /* sums run in f32 */
  } else {
    CHECK_ERROR(status, KILN_ERR_UNSUPPORTED, "bf16");
  }
  CHECK_OK(kiln_autocast_end(rt));
  if (loss) {
    CHECK_OK(kiln_backward(rt, loss, NULL, 0));
    CHECK_OK(kiln_tensor_grad(w, &grad));
    CHECK(grad != NULL);
    CHECK_OK(kiln_tensor_dtype(grad, &d));
    CHECK(d == KILN_F32);
    CHECK_OK(kiln_tensor_read(grad, g, sizeof g));
    for (i = 0; i < 12; ++i) CHECK(g[i] == 1.0f); /* d(sum of x @ w^T)/dw = sum of x's rows: 2 * 0.5 */
  }
  kiln_tensor_release(grad);
  kiln_tensor_release(loss);
  kiln_tensor_release(y);
  kiln_tensor_release(w);
  kiln_tensor_release(x);
}

int main(void) {
  kiln_runtime *rt = NULL, *other = NULL;
  if (kiln_runtime_create(NULL, &rt) != KILN_OK || kiln_runtime_create(NULL, &other) != KILN_OK) {
    fprintf(stderr, "runtime: %s\n", kiln_last_error());
    return 1;
  }
  scopes_nest(rt, other);
  bad_arguments(rt);
  linear_runs_low(rt);
  kiln_runtime_release(other);
  kiln_runtime_release(rt);
  return check_report("abi/autocast");
}
