/* What checkpointing saves: the peak of the CPU allocator during one
 * forward and backward, above what was held before it, for a deep MLP
 * (16 blocks of Linear(1024, 1024) and ReLU, batch 256) and a stack of 4
 * TransformerBlocks (embed_dim 256, batch 8 of 128 positions), plain and
 * with each block in a Checkpoint. Parameters' gradients exist from a
 * first step and are kept (accumulated into), as in training, so the peak
 * above the start is what the step's activations take. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kiln_test_support.h"

enum { MLP_BLOCKS = 16, MLP_WIDTH = 1024, MLP_BATCH = 256, T_BLOCKS = 4, T_EMBED = 256, T_BATCH = 8, T_LENGTH = 128 };

static kiln_module* layer(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n) {
  kiln_module* m = NULL;
  CHECK_OK(kiln_module_create(rt, type, config, n, &m));
  return m;
}

static kiln_module* mlp_block(kiln_runtime* rt) {
  const kiln_attr config[2] = {kiln_attr_int("in_features", MLP_WIDTH), kiln_attr_int("out_features", MLP_WIDTH)};
  kiln_module *seq = NULL, *lin = layer(rt, "Linear", config, 2), *relu = layer(rt, "ReLU", NULL, 0);
  CHECK_OK(kiln_sequential_create(rt, &seq));
  CHECK_OK(kiln_sequential_append(seq, NULL, lin));
  CHECK_OK(kiln_sequential_append(seq, NULL, relu));
  kiln_module_release(lin);
  kiln_module_release(relu);
  return seq;
}

static kiln_module* transformer_block(kiln_runtime* rt) {
  const kiln_attr config[2] = {kiln_attr_int("embed_dim", T_EMBED), kiln_attr_int("num_heads", 4)};
  return layer(rt, "TransformerBlock", config, 2);
}

/* The plain stack of `blocks` and the one with each block in a Checkpoint,
 * sharing the blocks and so the parameters. */
static void stacks(kiln_runtime* rt, kiln_module* const* blocks, size_t n, kiln_module** plain,
                   kiln_module** checkpointed) {
  size_t i;
  CHECK_OK(kiln_sequential_create(rt, plain));
  CHECK_OK(kiln_sequential_create(rt, checkpointed));
  for (i = 0; i < n; ++i) {
    kiln_module* wrapped = NULL;
    CHECK_OK(kiln_sequential_append(*plain, NULL, blocks[i]));
    CHECK_OK(kiln_module_checkpoint(rt, blocks[i], &wrapped));
    CHECK_OK(kiln_sequential_append(*checkpointed, NULL, wrapped));
    kiln_module_release(wrapped);
  }
}

static int64_t cpu_bytes(kiln_runtime* rt, int peak) {
  kiln_memory_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.size = sizeof stats;
  CHECK_OK(kiln_memory_stats_get(rt, KILN_DEVICE_CPU, 0, &stats));
  return peak ? stats.peak_bytes : stats.current_bytes;
}

/* Forward, sum, backward; returns the allocator's peak above its start. */
static int64_t step_peak(kiln_runtime* rt, kiln_module* model, kiln_tensor* x) {
  const kiln_op* sum = NULL;
  kiln_tensor *y = NULL, *loss = NULL;
  int64_t start;
  CHECK_OK(kiln_op_find(rt, "sum", &sum));
  CHECK_OK(kiln_memory_reset_peak(rt, KILN_DEVICE_CPU, 0));
  start = cpu_bytes(rt, 0);
  CHECK_OK(kiln_module_forward1(model, &x, 1, &y));
  CHECK_OK(kiln_op_call1(rt, sum, &y, 1, NULL, 0, &loss));
  kiln_tensor_release(y);
  CHECK_OK(kiln_backward(rt, loss, NULL, 0));
  kiln_tensor_release(loss);
  return cpu_bytes(rt, 1) - start;
}

static void compare(kiln_runtime* rt, const char* what, kiln_module* const* blocks, size_t n, const int64_t* shape,
                    int rank) {
  kiln_module *plain = NULL, *checkpointed = NULL;
  kiln_tensor* x = NULL;
  int64_t plain_peak, checkpointed_peak;
  const double mib = 1024.0 * 1024.0;
  CHECK_OK(kiln_tensor_full(rt, shape, rank, 0.5, KILN_F32, KILN_DEVICE_CPU, 0, &x));
  stacks(rt, blocks, n, &plain, &checkpointed);
  (void)step_peak(rt, plain, x); /* gradients now exist */
  plain_peak = step_peak(rt, plain, x);
  checkpointed_peak = step_peak(rt, checkpointed, x);
  printf("%s: peak above the start of forward+backward: plain %.1f MiB, checkpointed per block %.1f MiB (%.0f%%)\n",
         what, (double)plain_peak / mib, (double)checkpointed_peak / mib,
         100.0 * (double)checkpointed_peak / (double)plain_peak);
  CHECK(checkpointed_peak > 0 && checkpointed_peak * 4 < plain_peak * 3);
  kiln_tensor_release(x);
  kiln_module_release(checkpointed);
  kiln_module_release(plain);
}

int main(void) {
  kiln_runtime* rt = NULL;
  kiln_module* blocks[MLP_BLOCKS];
  const int64_t mlp_shape[2] = {MLP_BATCH, MLP_WIDTH}, t_shape[3] = {T_BATCH, T_LENGTH, T_EMBED};
  size_t i;
  CHECK_OK(kts_runtime_create(1, &rt));
  if (!rt) return check_report("plugins/checkpoint/checkpoint_memory");
  for (i = 0; i < MLP_BLOCKS; ++i) blocks[i] = mlp_block(rt);
  compare(rt, "MLP 16 x 1024, batch 256", blocks, MLP_BLOCKS, mlp_shape, 2);
  for (i = 0; i < MLP_BLOCKS; ++i) kiln_module_release(blocks[i]);
  for (i = 0; i < T_BLOCKS; ++i) blocks[i] = transformer_block(rt);
  compare(rt, "4 TransformerBlocks 256, batch 8 x 128", blocks, T_BLOCKS, t_shape, 3);
  for (i = 0; i < T_BLOCKS; ++i) kiln_module_release(blocks[i]);
  kiln_runtime_release(rt);
  return check_report("plugins/checkpoint/checkpoint_memory");
}
