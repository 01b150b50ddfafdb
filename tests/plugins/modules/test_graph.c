/* Graph: a residual connection, two inputs, several outputs of one node,
 * and the wiring mistakes kiln_graph_add and forward refuse. */
#include "module_test.h"

static const float x_data[6] = {1, -2, 3, 4, 5, -6};
static const float y_data[6] = {0.5f, 1, 1.5f, 2, 2.5f, 3};
static const int64_t shape[2] = {2, 3};
static const float w[3] = {2, -1, 0.5f}, b[3] = {0, 1, -1};
static const float w2[3] = {1, 3, -2}, b2[3] = {1, 0, 0};

static void residual(kiln_runtime* rt) {
  static const char* const inputs[1] = {"x"};
  static const char* const f_in[1] = {"x"};
  static const char* const add_in[2] = {"x", "f"};
  kiln_module* graph = NULL;
  kiln_module* f = affine(rt, 3, w, b);
  kiln_module* add = op_module(rt, "add");
  kiln_tensor* x = tensor_f32(rt, x_data, shape, 2);
  const char* type = NULL;
  float got[6], want[6];
  size_t i;
  CHECK_OK(kiln_graph_create(rt, inputs, 1, &graph));
  CHECK_OK(kiln_graph_add(graph, "f", f, f_in, 1));
  CHECK_OK(kiln_graph_add(graph, "sum", add, add_in, 2));
  forward_read(graph, x, got, 6);
  for (i = 0; i < 6; ++i) want[i] = x_data[i] + (x_data[i] * w[i % 3] + b[i % 3]);
  check_close(got, want, 6, "x + f(x)");
  CHECK_OK(kiln_module_type(graph, &type));
  CHECK(type && strcmp(type, "Graph") == 0);
  CHECK_OK(kiln_module_type(add, &type));
  CHECK(type && strcmp(type, "op:add") == 0);
  kiln_tensor_release(x);
  kiln_module_release(graph);
  kiln_module_release(add);
  kiln_module_release(f);
}

static void two_inputs_and_named_outputs(kiln_runtime* rt) {
  static const char* const inputs[2] = {"x", "y"};
  static const char *const a_in[1] = {"x"}, *const c_in[1] = {"y"};
  static const char* const split_in[1] = {"a"};
  static const char* const mul_in[2] = {"split:1", "c"};
  static const char* const outputs[2] = {"prod", "split:0"};
  kiln_module* graph = NULL;
  kiln_module* a = affine(rt, 3, w, b);
  kiln_module* c = affine(rt, 3, w2, b2);
  kiln_module* split = plain_layer(rt, "Split");
  kiln_module* mul = op_module(rt, "mul");
  kiln_tensor* args[2];
  kiln_tensor* out[2] = {NULL, NULL};
  size_t n = 0, i;
  float prod[6], first[6], want_prod[6], want_first[6];
  const char* name = NULL;
  kiln_tensor* t = NULL;
  args[0] = tensor_f32(rt, x_data, shape, 2);
  args[1] = tensor_f32(rt, y_data, shape, 2);
  CHECK_OK(kiln_graph_create(rt, inputs, 2, &graph));
  CHECK_OK(kiln_graph_add(graph, "a", a, a_in, 1));
  CHECK_OK(kiln_graph_add(graph, "c", c, c_in, 1));
  CHECK_OK(kiln_graph_add(graph, "split", split, split_in, 1));
  CHECK_OK(kiln_graph_add(graph, "prod", mul, mul_in, 2));
  CHECK_OK(kiln_graph_set_outputs(graph, outputs, 2));
  CHECK_OK(kiln_module_forward(graph, args, 2, out, 2, &n));
  CHECK(n == 2);
  if (n == 2) {
    CHECK_OK(kiln_tensor_read(out[0], prod, sizeof prod));
    CHECK_OK(kiln_tensor_read(out[1], first, sizeof first));
    for (i = 0; i < 6; ++i) {
      const size_t f = i % 3;
      const float ax = x_data[i] * w[f] + b[f];
      want_first[i] = ax;
      want_prod[i] = -ax * (y_data[i] * w2[f] + b2[f]);
    }
    check_close(prod, want_prod, 6, "-a(x) * c(y)");
    check_close(first, want_first, 6, "split:0");
  }
  CHECK_ERROR(kiln_module_forward(graph, args, 2, out, 1, &n), KILN_ERR_INVALID_ARGUMENT, "returns 2 outputs",
              "room for 1");
  CHECK_ERROR(kiln_module_forward(graph, args, 1, out, 2, &n), KILN_ERR_INVALID_ARGUMENT, "takes 2 inputs (x, y)",
              "got 1");
  /* Graph nodes name the parameters. */
  CHECK_OK(kiln_module_parameter(graph, 2, &name, &t));
  CHECK(name && strcmp(name, "c.weight") == 0);
  kiln_tensor_release(t);
  for (i = 0; i < n && i < 2; ++i) kiln_tensor_release(out[i]);
  kiln_tensor_release(args[0]);
  kiln_tensor_release(args[1]);
  kiln_module_release(graph);
  kiln_module_release(mul);
  kiln_module_release(split);
  kiln_module_release(c);
  kiln_module_release(a);
}

static void wiring_errors(kiln_runtime* rt) {
  static const char* const inputs[1] = {"x"};
  static const char *const from_x[1] = {"x"}, *const from_a[1] = {"a"};
  static const char *const unknown[1] = {"z"}, *const bad_index[1] = {"a:one"}, *const input_index[1] = {"x:1"};
  static const char* const past_end[1] = {"a:1"};
  static const char* const twice[2] = {"x", "x"};
  kiln_module *graph = NULL, *empty = NULL, *bad_inputs = NULL;
  kiln_module* a = affine(rt, 3, w, b);
  kiln_module* c = affine(rt, 3, w2, b2);
  kiln_tensor* x = tensor_f32(rt, x_data, shape, 2);
  kiln_tensor* y = NULL;
  CHECK_ERROR(kiln_graph_create(rt, twice, 2, &bad_inputs), KILN_ERR_INVALID_ARGUMENT, "'x' is named twice");
  CHECK(bad_inputs == NULL);
  CHECK_OK(kiln_graph_create(rt, inputs, 1, &graph));
  CHECK_ERROR(kiln_graph_add(graph, "a", a, unknown, 1), KILN_ERR_NOT_FOUND, "no input or node named 'z'",
              "inputs: x; nodes: none");
  CHECK_OK(kiln_graph_add(graph, "a", a, from_x, 1));
  CHECK_ERROR(kiln_graph_add(graph, "a", c, from_a, 1), KILN_ERR_INVALID_ARGUMENT, "'a' is already taken", "nodes: a");
  CHECK_ERROR(kiln_graph_add(graph, "x", c, from_a, 1), KILN_ERR_INVALID_ARGUMENT, "'x' is already taken");
  CHECK_ERROR(kiln_graph_add(graph, "c", c, bad_index, 1), KILN_ERR_INVALID_ARGUMENT, "'a:one' is not");
  CHECK_ERROR(kiln_graph_add(graph, "c", c, input_index, 1), KILN_ERR_INVALID_ARGUMENT, "only output 0");
  CHECK_ERROR(kiln_graph_add(graph, "c", graph, from_a, 1), KILN_ERR_INVALID_ARGUMENT, "inside itself");
  CHECK_ERROR(kiln_graph_set_outputs(graph, unknown, 1), KILN_ERR_NOT_FOUND, "'z'");
  CHECK_ERROR(kiln_graph_set_outputs(graph, NULL, 0), KILN_ERR_INVALID_ARGUMENT, "at least one output");
  /* An output index past what the node gives is only known when it runs. */
  CHECK_OK(kiln_graph_add(graph, "c", c, past_end, 1));
  CHECK_ERROR(kiln_module_forward1(graph, &x, 1, &y), KILN_ERR_INVALID_ARGUMENT, "node 'c' reads 'a:1'",
              "gave 1 output(s)");
  CHECK(y == NULL);
  CHECK_ERROR(kiln_sequential_append(graph, NULL, a), KILN_ERR_INVALID_ARGUMENT, "of type Graph, not a Sequential");

  CHECK_OK(kiln_graph_create(rt, inputs, 1, &empty));
  CHECK_ERROR(kiln_module_forward1(empty, &x, 1, &y), KILN_ERR_INVALID_STATE, "no nodes");
  CHECK_OK(kiln_graph_set_outputs(empty, from_x, 1));
  CHECK_OK(kiln_module_forward1(empty, &x, 1, &y));
  CHECK(y == x);
  kiln_tensor_release(y);

  kiln_tensor_release(x);
  kiln_module_release(empty);
  kiln_module_release(graph);
  kiln_module_release(c);
  kiln_module_release(a);
}

/* An op module keeps its own copy of the attributes it was given. */
static void op_module_with_attributes(kiln_runtime* rt) {
  const kiln_op* reshape = NULL;
  kiln_module *m = NULL, *refused = NULL;
  kiln_tensor* x = tensor_f32(rt, x_data, shape, 2);
  kiln_tensor* y = NULL;
  int64_t new_shape[2] = {3, 2}, got_shape[2] = {0, 0};
  float got[6];
  kiln_attr attr = kiln_attr_ints("shape", new_shape, 2);
  CHECK_OK(kiln_op_find(rt, "reshape", &reshape));
  CHECK_OK(kiln_module_from_op(rt, reshape, &attr, 1, &m));
  new_shape[0] = 6;
  new_shape[1] = 1;
  attr = kiln_attr_tensor("shape", x);
  CHECK_ERROR(kiln_module_from_op(rt, reshape, &attr, 1, &refused), KILN_ERR_INVALID_ARGUMENT, "op:reshape",
              "cannot be tensors");
  CHECK(refused == NULL);
  CHECK_OK(kiln_module_forward1(m, &x, 1, &y));
  CHECK_OK(kiln_tensor_shape(y, got_shape, 2));
  CHECK(got_shape[0] == 3 && got_shape[1] == 2);
  CHECK_OK(kiln_tensor_read(y, got, sizeof got));
  check_close(got, x_data, 6, "reshape keeps the elements");
  kiln_tensor_release(y);
  kiln_tensor_release(x);
  kiln_module_release(m);
}

int main(void) {
  kiln_runtime* rt = test_runtime();
  if (!rt) return check_report("modules/graph");
  residual(rt);
  two_inputs_and_named_outputs(rt);
  wiring_errors(rt);
  op_module_with_attributes(rt);
  kiln_runtime_release(rt);
  return check_report("modules/graph");
}
