/* Lengths and batch contents: num_examples and num_batches with and
 * without drop_last and sharding, and each field of a batch is the
 * examples' field stacked along a new first dimension. */
#include "pipeline_test.h"

static void check_length(kiln_data_source* src, int64_t batch_size, int drop_last, int rank, int world_size,
                         int64_t want_examples, int64_t want_batches) {
  kiln_loader_options o = loader_options(batch_size, 1);
  kiln_loader* loader;
  int64_t examples = -1, batches = -1, delivered = 0;
  size_t bytes = 0;
  int64_t indices[16];
  o.drop_last = drop_last;
  o.rank = rank;
  o.world_size = world_size;
  loader = open_loader(src, NULL, 0, &o);
  CHECK_OK(kiln_loader_length(loader, &examples, &batches));
  CHECK(examples == want_examples);
  CHECK(batches == want_batches);
  delivered = read_epoch(loader, 0, "input", indices, sizeof indices, &bytes);
  CHECK(delivered == want_batches);
  kiln_loader_release(loader);
}

/* Batch rows equal the source's examples: synthetic inputs f32[3, 4] and
 * i64 targets, 10 examples in batches of 4 (4, 4, 2). */
static void check_stacking(kiln_runtime* rt) {
  const int64_t shape[2] = {3, 4};
  const kiln_attr config[2] = {kiln_attr_int("length", 10), kiln_attr_ints("shape", shape, 2)};
  kiln_data_source* src = NULL;
  kiln_loader_options o = loader_options(4, 2);
  kiln_loader* loader;
  kiln_example* batch = NULL;
  int64_t first = 0;
  CHECK_OK(kiln_data_source_create(rt, "synthetic", config, 2, &src));
  if (!src) return;
  loader = open_loader(src, NULL, 0, &o);
  CHECK_OK(kiln_loader_start_epoch(loader, 0));
  for (;;) {
    kiln_tensor *input = NULL, *target = NULL;
    int64_t dims[KILN_MAX_DIMS], rows, row;
    int rank = 0;
    float batch_inputs[4 * 12];
    int64_t batch_targets[4];
    CHECK_OK(kiln_loader_next(loader, &batch));
    if (!batch) break;
    CHECK_OK(kiln_example_get(batch, "input", &input));
    CHECK_OK(kiln_example_get(batch, "target", &target));
    if (!input || !target) break;
    CHECK_OK(kiln_tensor_rank(input, &rank));
    CHECK_OK(kiln_tensor_shape(input, dims, KILN_MAX_DIMS));
    rows = dims[0];
    CHECK(rank == 3 && rows == (first < 8 ? 4 : 2) && dims[1] == 3 && dims[2] == 4);
    CHECK_OK(kiln_tensor_rank(target, &rank));
    CHECK(rank == 1);
    CHECK_OK(kiln_tensor_read(input, batch_inputs, (size_t)rows * 12 * sizeof(float)));
    CHECK_OK(kiln_tensor_read(target, batch_targets, (size_t)rows * sizeof(int64_t)));
    for (row = 0; row < rows; ++row) {
      kiln_example* ex = NULL;
      kiln_tensor *x = NULL, *y = NULL;
      float example_input[12];
      int64_t example_target = -1;
      CHECK_OK(kiln_data_source_get(src, first + row, &ex));
      CHECK_OK(kiln_example_get(ex, "input", &x));
      CHECK_OK(kiln_example_get(ex, "target", &y));
      CHECK_OK(kiln_tensor_read(x, example_input, sizeof example_input));
      CHECK_OK(kiln_tensor_read(y, &example_target, sizeof example_target));
      CHECK(memcmp(example_input, batch_inputs + row * 12, sizeof example_input) == 0);
      CHECK(example_target == batch_targets[row]);
      kiln_tensor_release(x);
      kiln_tensor_release(y);
      kiln_example_release(ex);
    }
    first += rows;
    kiln_tensor_release(input);
    kiln_tensor_release(target);
    kiln_example_release(batch);
  }
  CHECK(first == 10);
  kiln_loader_release(loader);
  kiln_data_source_release(src);
}

int main(void) {
  kiln_runtime* rt = open_runtime();
  kiln_data_source* src = index_source(rt, 10);
  check_length(src, 3, 0, 0, 1, 10, 4);
  check_length(src, 3, 1, 0, 1, 10, 3);
  check_length(src, 5, 1, 0, 1, 10, 2);
  check_length(src, 3, 0, 0, 0, 10, 4); /* world_size 0: no sharding */
  check_length(src, 3, 0, 0, 3, 4, 2);  /* positions 0, 3, 6, 9 */
  check_length(src, 3, 1, 0, 3, 4, 1);
  check_length(src, 3, 0, 1, 3, 3, 1);
  check_length(src, 3, 0, 2, 3, 3, 1);
  check_length(src, 4, 1, 2, 3, 3, 0);
  check_length(src, 3, 0, 1, 12, 1, 1); /* more ranks than examples */
  check_length(src, 3, 0, 11, 12, 0, 0);
  kiln_data_source_release(src);
  check_stacking(rt);
  kiln_runtime_release(rt);
  return check_report("pipeline/batches");
}
