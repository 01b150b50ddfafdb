/* Train/eval mode reaches everything inside a module: container children,
 * graph nodes and a layer's sub-layers. ModeScale doubles its input in
 * train mode only, so the outputs show which mode each part ran in. */
#include "module_test.h"

static const float x_data[3] = {1, 2, 3};
static const int64_t shape[1] = {3};

static int training_of(const kiln_module* m) {
  int training = -1;
  CHECK_OK(kiln_module_training(m, &training));
  return training;
}

int main(void) {
  static const char* const inputs[1] = {"x"};
  static const char *const seq_in[1] = {"x"}, *const block_in[1] = {"seq"};
  kiln_runtime* rt = test_runtime();
  kiln_module *graph = NULL, *seq = NULL, *mode = NULL, *block = NULL;
  kiln_tensor* x;
  const kiln_attr features = kiln_attr_int("features", 3);
  float got[3], train_want[3], eval_want[3];
  size_t i;
  if (!rt) return check_report("modules/training_mode");
  x = tensor_f32(rt, x_data, shape, 1);
  mode = plain_layer(rt, "ModeScale");
  CHECK_OK(kiln_module_create(rt, "Block", &features, 1, &block));
  CHECK_OK(kiln_sequential_create(rt, &seq));
  CHECK_OK(kiln_sequential_append(seq, NULL, mode));
  CHECK_OK(kiln_graph_create(rt, inputs, 1, &graph));
  CHECK_OK(kiln_graph_add(graph, "seq", seq, seq_in, 1));
  CHECK_OK(kiln_graph_add(graph, "block", block, block_in, 1));
  /* Block: gate * second(mode(first(h))), every weight 1 and bias 0, so
   * each ModeScale doubles in train mode: 4x in all, 1x in eval mode. */
  for (i = 0; i < 3; ++i) {
    train_want[i] = 4 * x_data[i];
    eval_want[i] = x_data[i];
  }

  CHECK(training_of(graph) == 1 && training_of(mode) == 1);
  forward_read(graph, x, got, 3);
  check_close(got, train_want, 3, "train mode");

  CHECK_OK(kiln_module_set_training(graph, 0));
  CHECK(training_of(graph) == 0 && training_of(seq) == 0 && training_of(mode) == 0 && training_of(block) == 0);
  forward_read(graph, x, got, 3);
  check_close(got, eval_want, 3, "eval mode, the Block's sub-layer included");

  /* One part back in train mode: only its own doubling returns. */
  CHECK_OK(kiln_module_set_training(mode, 1));
  forward_read(graph, x, got, 3);
  for (i = 0; i < 3; ++i) train_want[i] = 2 * x_data[i];
  check_close(got, train_want, 3, "eval mode but the Sequential's ModeScale");
  CHECK(training_of(graph) == 0);

  CHECK_OK(kiln_module_set_training(graph, 1));
  forward_read(graph, x, got, 3);
  for (i = 0; i < 3; ++i) train_want[i] = 4 * x_data[i];
  check_close(got, train_want, 3, "train mode again");

  kiln_tensor_release(x);
  kiln_module_release(graph);
  kiln_module_release(seq);
  kiln_module_release(block);
  kiln_module_release(mode);
  kiln_runtime_release(rt);
  return check_report("modules/training_mode");
}
