/* kiln_module_to and kiln_module_cast keep the handles the caller and the
 * layers hold, now on the new data; then, in double precision, gradients
 * through Sequential and Graph against finite differences. */
#include "module_test.h"

static const float x_data[6] = {0.5f, -1, 2, 1.5f, 0.25f, -0.75f};
static const int64_t shape[2] = {2, 3};
static const float w1[3] = {1, 2, 3}, b1[3] = {0.5f, 0, -1};
static const float w2[3] = {-1, 0.5f, 2}, b2[3] = {1, 1, 1};

static kiln_module* two_affines(kiln_runtime* rt) {
  kiln_module* seq = NULL;
  kiln_module* a = affine(rt, 3, w1, b1);
  kiln_module* b = affine(rt, 3, w2, b2);
  CHECK_OK(kiln_sequential_create(rt, &seq));
  CHECK_OK(kiln_sequential_append(seq, NULL, a));
  CHECK_OK(kiln_sequential_append(seq, NULL, b));
  kiln_module_release(a);
  kiln_module_release(b);
  return seq;
}

/* sum(m(x)) as a new tensor. */
static kiln_tensor* loss_of(kiln_runtime* rt, kiln_module* m, kiln_tensor* x) {
  const kiln_op* sum = NULL;
  kiln_tensor *y = NULL, *loss = NULL;
  CHECK_OK(kiln_op_find(rt, "sum", &sum));
  CHECK_OK(kiln_module_forward1(m, &x, 1, &y));
  if (y) CHECK_OK(kiln_op_call1(rt, sum, &y, 1, NULL, 0, &loss));
  kiln_tensor_release(y);
  return loss;
}

static double loss_value(kiln_runtime* rt, kiln_module* m, kiln_tensor* x) {
  double value = 0;
  kiln_tensor* loss = loss_of(rt, m, x);
  if (loss) CHECK_OK(kiln_tensor_read(loss, &value, sizeof value));
  kiln_tensor_release(loss);
  return value;
}

static void cast_keeps_handles(kiln_runtime* rt) {
  kiln_module* seq = two_affines(rt);
  kiln_tensor *weight = NULL, *count = NULL, *grad = NULL, *loss = NULL, *x64 = NULL, *y = NULL;
  kiln_tensor* x = tensor_f32(rt, x_data, shape, 2);
  const char* name = NULL;
  kiln_dtype dtype = KILN_F32;
  int requires_grad = 0;
  double weight64[3], x_double[6], y64[6], want[6];
  int64_t count_value = 0;
  size_t i;
  CHECK_OK(kiln_module_parameter(seq, 0, &name, &weight));
  CHECK_OK(kiln_module_buffer(seq, 0, &name, &count));
  loss = loss_of(rt, seq, x);
  CHECK_OK(kiln_backward(rt, loss, NULL, 0));
  CHECK_OK(kiln_tensor_grad(weight, &grad));
  CHECK(grad != NULL);
  kiln_tensor_release(grad);
  grad = NULL;

  CHECK_ERROR(kiln_module_cast(seq, KILN_I32), KILN_ERR_INVALID_ARGUMENT, "cannot cast a module to i32");
  CHECK_OK(kiln_tensor_dtype(weight, &dtype));
  CHECK(dtype == KILN_F32);

  CHECK_OK(kiln_module_cast(seq, KILN_F64));
  CHECK_OK(kiln_tensor_dtype(weight, &dtype));
  CHECK(dtype == KILN_F64);
  CHECK_OK(kiln_tensor_read(weight, weight64, sizeof weight64));
  for (i = 0; i < 3; ++i) CHECK(weight64[i] == (double)w1[i]);
  CHECK_OK(kiln_tensor_requires_grad(weight, &requires_grad));
  CHECK(requires_grad == 1);
  CHECK_OK(kiln_tensor_grad(weight, &grad));
  CHECK(grad == NULL);
  /* Integer buffers keep their dtype. */
  CHECK_OK(kiln_tensor_dtype(count, &dtype));
  CHECK(dtype == KILN_I64);
  CHECK_OK(kiln_tensor_read(count, &count_value, sizeof count_value));
  CHECK(count_value == 3);

  /* The layers compute with the cast parameters they hold. */
  for (i = 0; i < 6; ++i) x_double[i] = x_data[i];
  CHECK_OK(kiln_tensor_from_data(rt, x_double, sizeof x_double, shape, 2, KILN_F64, &x64));
  CHECK_OK(kiln_module_forward1(seq, &x64, 1, &y));
  CHECK_OK(kiln_tensor_dtype(y, &dtype));
  CHECK(dtype == KILN_F64);
  CHECK_OK(kiln_tensor_read(y, y64, sizeof y64));
  for (i = 0; i < 6; ++i) {
    const size_t f = i % 3;
    want[i] = (x_double[i] * w1[f] + b1[f]) * w2[f] + b2[f];
    CHECK(fabs(y64[i] - want[i]) < 1e-12);
  }

  CHECK_OK(kiln_module_to(seq, KILN_DEVICE_CPU, 0));
  CHECK_OK(kiln_tensor_dtype(weight, &dtype));
  CHECK(dtype == KILN_F64);
  CHECK_ERROR(kiln_module_to(seq, KILN_DEVICE_CUDA, 99), KILN_ERR_DEVICE_MISMATCH, "cuda:99");

  kiln_tensor_release(y);
  kiln_tensor_release(x64);
  kiln_tensor_release(loss);
  kiln_tensor_release(count);
  kiln_tensor_release(weight);
  kiln_tensor_release(x);
  kiln_module_release(seq);
}

/* Every parameter's gradient of sum(m(x)) against central differences. */
static void check_gradients(kiln_runtime* rt, kiln_module* m, const char* what) {
  const double eps = 1e-6, atol = 1e-5, rtol = 1e-3;
  double x_double[6];
  kiln_tensor *x = NULL, *loss = NULL;
  size_t count = 0, p, i;
  for (i = 0; i < 6; ++i) x_double[i] = x_data[i];
  CHECK_OK(kiln_module_cast(m, KILN_F64));
  CHECK_OK(kiln_tensor_from_data(rt, x_double, sizeof x_double, shape, 2, KILN_F64, &x));
  loss = loss_of(rt, m, x);
  CHECK_OK(kiln_backward(rt, loss, NULL, 0));
  CHECK_OK(kiln_module_parameter_count(m, &count));
  CHECK(count > 0);
  for (p = 0; p < count; ++p) {
    const char* name = NULL;
    kiln_tensor *param = NULL, *grad = NULL;
    double* data = NULL;
    double analytic[3] = {0, 0, 0};
    CHECK_OK(kiln_module_parameter(m, p, &name, &param));
    CHECK_OK(kiln_tensor_grad(param, &grad));
    CHECK_OK(kiln_tensor_data(param, (void**)&data));
    if (grad) CHECK_OK(kiln_tensor_read(grad, analytic, sizeof analytic));
    for (i = 0; i < 3 && data && grad; ++i) {
      const double saved = data[i];
      double plus, minus, numeric;
      data[i] = saved + eps;
      plus = loss_value(rt, m, x);
      data[i] = saved - eps;
      minus = loss_value(rt, m, x);
      data[i] = saved;
      numeric = (plus - minus) / (2 * eps);
      if (fabs(numeric - analytic[i]) > atol + rtol * fabs(numeric)) {
        fprintf(stderr, "%s: d loss / d %s[%zu] is %g, finite differences give %g\n", what, name, i, analytic[i],
                numeric);
        ++check_failures;
      }
    }
    CHECK(grad != NULL);
    kiln_tensor_release(grad);
    kiln_tensor_release(param);
  }
  kiln_tensor_release(loss);
  kiln_tensor_release(x);
}

static void gradients_through_containers(kiln_runtime* rt) {
  static const char* const inputs[1] = {"x"};
  static const char *const f_in[1] = {"x"}, *const add_in[2] = {"x", "f"}, *const g_in[1] = {"sum"};
  kiln_module* seq = two_affines(rt);
  kiln_module* graph = NULL;
  kiln_module* f = affine(rt, 3, w1, b1);
  kiln_module* g = affine(rt, 3, w2, b2);
  kiln_module* add = op_module(rt, "add");
  check_gradients(rt, seq, "Sequential");
  CHECK_OK(kiln_graph_create(rt, inputs, 1, &graph));
  CHECK_OK(kiln_graph_add(graph, "f", f, f_in, 1));
  CHECK_OK(kiln_graph_add(graph, "sum", add, add_in, 2));
  CHECK_OK(kiln_graph_add(graph, "g", g, g_in, 1));
  check_gradients(rt, graph, "Graph with a residual");
  kiln_module_release(add);
  kiln_module_release(g);
  kiln_module_release(f);
  kiln_module_release(graph);
  kiln_module_release(seq);
}

int main(void) {
  kiln_runtime* rt = test_runtime();
  if (!rt) return check_report("modules/convert");
  cast_keeps_handles(rt);
  gradients_through_containers(rt);
  kiln_runtime_release(rt);
  return check_report("modules/convert");
}
