/* kiln_module_build: output shapes, and failures that say which layer
 * (path, index, type), what it got (input shapes) and why, with the
 * status of the op or plugin that failed; the modes are restored. */
#include "module_test.h"

static kiln_tensor_desc desc2(int64_t rows, int64_t cols) {
  kiln_tensor_desc d;
  memset(&d, 0, sizeof d);
  d.rank = 2;
  d.dims[0] = rows;
  d.dims[1] = cols;
  d.dtype = KILN_F32;
  return d;
}

static kiln_module* affine_ones(kiln_runtime* rt, int64_t features) {
  kiln_module* m = NULL;
  const kiln_attr config = kiln_attr_int("features", features);
  CHECK_OK(kiln_module_create(rt, "Affine", &config, 1, &m));
  return m;
}

static void append(kiln_module* seq, const char* name, kiln_module* child) {
  CHECK_OK(kiln_sequential_append(seq, name, child));
  kiln_module_release(child);
}

static void output_shapes(kiln_runtime* rt) {
  kiln_module* seq = NULL;
  kiln_tensor_desc in = desc2(2, 3), out[2];
  size_t n = 0;
  CHECK_OK(kiln_sequential_create(rt, &seq));
  append(seq, NULL, affine_ones(rt, 3));
  append(seq, NULL, plain_layer(rt, "Split"));
  CHECK_OK(kiln_module_build(seq, &in, 1, out, 2, &n));
  CHECK(n == 2);
  CHECK(out[0].rank == 2 && out[0].dims[0] == 2 && out[0].dims[1] == 3 && out[0].dtype == KILN_F32);
  CHECK(out[1].rank == 2 && out[1].dims[0] == 2 && out[1].dims[1] == 3 && out[1].dtype == KILN_F32);
  CHECK_ERROR(kiln_module_build(seq, &in, 1, out, 1, &n), KILN_ERR_INVALID_ARGUMENT, "returns 2 outputs", "room for 1");
  in.rank = 9;
  CHECK_ERROR(kiln_module_build(seq, &in, 1, out, 2, &n), KILN_ERR_INVALID_ARGUMENT, "inputs[0]");
  kiln_module_release(seq);
}

static void layer_failures_name_the_layer(kiln_runtime* rt) {
  kiln_module *seq = NULL, *stem = NULL;
  kiln_tensor_desc in = desc2(2, 3), out[1];
  size_t n = 0;
  const kiln_attr block_features = kiln_attr_int("features", 4);
  kiln_module* block = NULL;
  CHECK_OK(kiln_sequential_create(rt, &seq));
  append(seq, "in", affine_ones(rt, 3));
  append(seq, NULL, plain_layer(rt, "ModeScale"));
  append(seq, "head", affine_ones(rt, 5));
  CHECK_ERROR(kiln_module_build(seq, &in, 1, out, 1, &n), KILN_ERR_SHAPE_MISMATCH,
              "layer 'head' (Affine, index 2 in Sequential) on input f32[2, 3]: ",
              "Affine expected the last dimension to be 5 (features), got 3");
  kiln_module_release(seq);

  /* Nested containers: the path has every level, the index is the innermost. */
  CHECK_OK(kiln_sequential_create(rt, &seq));
  CHECK_OK(kiln_sequential_create(rt, &stem));
  append(stem, NULL, affine_ones(rt, 3));
  append(stem, NULL, affine_ones(rt, 4));
  append(seq, "stem", stem);
  CHECK_ERROR(kiln_module_build(seq, &in, 1, out, 1, &n), KILN_ERR_SHAPE_MISMATCH,
              "layer 'stem.1' (Affine, index 1 in Sequential) on input f32[2, 3]", "got 3");
  kiln_module_release(seq);

  /* A layer whose sub-layer fails. */
  CHECK_OK(kiln_module_create(rt, "Block", &block_features, 1, &block));
  CHECK_ERROR(kiln_module_build(block, &in, 1, out, 1, &n), KILN_ERR_SHAPE_MISMATCH, "Block on input f32[2, 3]",
              "expected the last dimension to be 4 (features), got 3");
  kiln_module_release(block);
}

static void op_failure_in_a_graph(kiln_runtime* rt) {
  static const char* const inputs[2] = {"x", "y"};
  static const char *const f_in[1] = {"x"}, *const add_in[2] = {"f", "y"};
  kiln_module* graph = NULL;
  kiln_module* add = op_module(rt, "add");
  kiln_module* f = affine_ones(rt, 3);
  kiln_tensor_desc in[2], out[1];
  size_t n = 0;
  in[0] = desc2(2, 3);
  in[1] = desc2(2, 4);
  CHECK_OK(kiln_graph_create(rt, inputs, 2, &graph));
  CHECK_OK(kiln_graph_add(graph, "f", f, f_in, 1));
  CHECK_OK(kiln_graph_add(graph, "join", add, add_in, 2));
  CHECK_ERROR(kiln_module_build(graph, in, 2, out, 1, &n), KILN_ERR_SHAPE_MISMATCH,
              "layer 'join' (op:add, index 1 in Graph) on inputs f32[2, 3], f32[2, 4]: ", "add");
  in[1] = desc2(2, 3);
  CHECK_OK(kiln_module_build(graph, in, 2, out, 1, &n));
  CHECK(n == 1 && out[0].rank == 2 && out[0].dims[1] == 3);
  kiln_module_release(graph);
  kiln_module_release(add);
  kiln_module_release(f);
}

static int training_of(const kiln_module* m) {
  int training = -1;
  CHECK_OK(kiln_module_training(m, &training));
  return training;
}

static void modes_are_restored(kiln_runtime* rt) {
  kiln_module* seq = NULL;
  kiln_module* mode = plain_layer(rt, "ModeScale");
  kiln_module* head = affine_ones(rt, 3);
  kiln_tensor_desc good = desc2(1, 3), bad = desc2(1, 2), out[1];
  size_t n = 0;
  int grad_enabled = 0;
  CHECK_OK(kiln_sequential_create(rt, &seq));
  CHECK_OK(kiln_sequential_append(seq, NULL, mode));
  CHECK_OK(kiln_sequential_append(seq, NULL, head));
  CHECK_OK(kiln_module_set_training(mode, 0));
  CHECK_OK(kiln_module_build(seq, &good, 1, out, 1, &n));
  CHECK(training_of(seq) == 1 && training_of(mode) == 0 && training_of(head) == 1);
  CHECK_ERROR(kiln_module_build(seq, &bad, 1, out, 1, &n), KILN_ERR_SHAPE_MISMATCH, "layer '1'");
  CHECK(training_of(seq) == 1 && training_of(mode) == 0 && training_of(head) == 1);
  CHECK_OK(kiln_grad_enabled(rt, &grad_enabled));
  CHECK(grad_enabled == 1);
  kiln_module_release(seq);
  kiln_module_release(head);
  kiln_module_release(mode);
}

int main(void) {
  kiln_runtime* rt = test_runtime();
  if (!rt) return check_report("modules/build");
  output_shapes(rt);
  layer_failures_name_the_layer(rt);
  op_failure_in_a_graph(rt);
  modes_are_restored(rt);
  kiln_runtime_release(rt);
  return check_report("modules/build");
}
