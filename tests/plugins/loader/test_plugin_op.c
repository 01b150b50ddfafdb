/* A plugin's op with a CPU kernel and a backward: forward values against
 * scale * x^3, and the gradient against central finite differences in f64. */
#include <math.h>

#include "loader_support.h"

#define N 5

static const double xs[N] = {0.5, -1.25, 2.0, 0.0, -0.75};
static const double ws[N] = {1.0, -0.5, 0.25, 2.0, 1.5}; /* L = sum(w * y) */
static const double scale = 1.5;

static kiln_tensor* cube(kiln_runtime* rt, const kiln_op* op, kiln_tensor* x) {
  kiln_attr attr = kiln_attr_float("scale", scale);
  kiln_tensor* y = NULL;
  CHECK_OK(kiln_op_call1(rt, op, &x, 1, &attr, 1, &y));
  return y;
}

static double loss_at(kiln_runtime* rt, const kiln_op* op, const double* x) {
  const int64_t shape[1] = {N};
  kiln_tensor *t = NULL, *y;
  double out[N], loss = 0;
  int i;
  CHECK_OK(kiln_tensor_from_data(rt, x, sizeof(double) * N, shape, 1, KILN_F64, &t));
  y = cube(rt, op, t);
  CHECK_OK(kiln_tensor_read(y, out, sizeof out));
  for (i = 0; i < N; ++i) loss += ws[i] * out[i];
  kiln_tensor_release(y);
  kiln_tensor_release(t);
  return loss;
}

static void check_forward_f32(kiln_runtime* rt, const kiln_op* op) {
  const int64_t shape[1] = {N};
  float x32[N], out[N];
  kiln_tensor *x = NULL, *y;
  int i;
  for (i = 0; i < N; ++i) x32[i] = (float)xs[i];
  CHECK_OK(kiln_tensor_from_data(rt, x32, sizeof x32, shape, 1, KILN_F32, &x));
  y = cube(rt, op, x);
  CHECK_OK(kiln_tensor_read(y, out, sizeof out));
  for (i = 0; i < N; ++i) CHECK(fabs(out[i] - scale * xs[i] * xs[i] * xs[i]) < 1e-5);
  kiln_tensor_release(y);
  kiln_tensor_release(x);
}

static void check_gradient_f64(kiln_runtime* rt, const kiln_op* op) {
  const int64_t shape[1] = {N};
  const double eps = 1e-6;
  kiln_tensor *x = NULL, *w = NULL, *y, *grad = NULL;
  double out[N], analytic[N], probe[N];
  int i;
  CHECK_OK(kiln_tensor_from_data(rt, xs, sizeof xs, shape, 1, KILN_F64, &x));
  CHECK_OK(kiln_tensor_from_data(rt, ws, sizeof ws, shape, 1, KILN_F64, &w));
  CHECK_OK(kiln_tensor_set_requires_grad(x, 1));
  y = cube(rt, op, x);
  CHECK_OK(kiln_tensor_read(y, out, sizeof out));
  for (i = 0; i < N; ++i) CHECK(fabs(out[i] - scale * xs[i] * xs[i] * xs[i]) < 1e-12);
  CHECK_OK(kiln_backward(rt, y, w, 0));
  CHECK_OK(kiln_tensor_grad(x, &grad));
  CHECK(grad != NULL);
  if (grad) CHECK_OK(kiln_tensor_read(grad, analytic, sizeof analytic));
  for (i = 0; i < N && grad; ++i) {
    double numeric, lp, lm;
    int k;
    for (k = 0; k < N; ++k) probe[k] = xs[k];
    probe[i] = xs[i] + eps;
    lp = loss_at(rt, op, probe);
    probe[i] = xs[i] - eps;
    lm = loss_at(rt, op, probe);
    numeric = (lp - lm) / (2 * eps);
    CHECK(fabs(analytic[i] - numeric) <= 1e-5 + 1e-3 * fabs(numeric));
    CHECK(fabs(analytic[i] - 3 * scale * xs[i] * xs[i] * ws[i]) < 1e-9);
  }
  kiln_tensor_release(grad);
  kiln_tensor_release(y);
  kiln_tensor_release(w);
  kiln_tensor_release(x);
}

static void check_errors(kiln_runtime* rt, const kiln_op* op) {
  const int64_t shape[1] = {2};
  kiln_tensor *x = NULL, *y = NULL;
  kiln_attr attr = kiln_attr_string("scale", "big");
  CHECK_OK(kiln_tensor_full(rt, shape, 1, 1.0, KILN_I32, KILN_DEVICE_CPU, 0, &x));
  /* The op lists f32 and f64 only. */
  CHECK_ERROR(kiln_op_call1(rt, op, &x, 1, NULL, 0, &y), KILN_ERR_UNSUPPORTED, "test_cube", "i32");
  CHECK_ERROR(kiln_op_call1(rt, op, &x, 1, &attr, 1, &y), KILN_ERR_INVALID_ARGUMENT, "scale");
  CHECK(y == NULL);
  kiln_tensor_release(x);
}

int main(void) {
  kiln_runtime* rt = bare_runtime();
  const kiln_op* op = NULL;
  CHECK_OK(kiln_plugin_load(rt, GOOD_PLUGIN));
  CHECK_OK(kiln_op_find(rt, "test_cube", &op));
  if (op) {
    check_forward_f32(rt, op);
    check_gradient_f64(rt, op);
    check_errors(rt, op);
  }
  kiln_runtime_release(rt);
  return check_report("plugins/loader/plugin_op");
}
