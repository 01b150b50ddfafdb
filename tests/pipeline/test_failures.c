/* Failures in the workers: a one_hot whose num_classes is too small for
 * some targets, and a transform that refuses the dtype of the field. next()
 * returns the error naming the example, the epoch ends, and the loader can
 * start another epoch or be released without hanging. */
#include "pipeline_test.h"

static kiln_transform* one_hot(kiln_runtime* rt, int64_t num_classes, const char* field) {
  const kiln_attr config[2] = {kiln_attr_int("num_classes", num_classes), kiln_attr_string("field", field)};
  kiln_transform* tr = NULL;
  CHECK_OK(kiln_transform_create(rt, "one_hot", config, 2, &tr));
  if (!tr) exit(check_report("one_hot"));
  return tr;
}

/* Targets are the indices 0..19; classes 0..4 fit, 5 is the first that
 * does not. In order with batches of 4, batch 0 (0..3) is good and batch 1
 * (4..7) fails at example 5. */
static void check_failing_transform(kiln_runtime* rt, kiln_data_source* src, int workers) {
  kiln_transform* tr = one_hot(rt, 5, "target");
  kiln_loader_options o = loader_options(4, workers);
  kiln_loader* loader = open_loader(src, &tr, 1, &o);
  kiln_example* batch = NULL;
  int64_t epoch;
  for (epoch = 0; epoch < 2; ++epoch) {
    CHECK_OK(kiln_loader_start_epoch(loader, epoch));
    CHECK_OK(kiln_loader_next(loader, &batch));
    CHECK(batch != NULL);
    kiln_example_release(batch);
    batch = NULL;
    CHECK_ERROR(kiln_loader_next(loader, &batch), KILN_ERR_INVALID_ARGUMENT, "kiln_loader_next", "example 5",
                "one_hot", "index 5 of field 'target' is outside [0, 5)");
    CHECK(batch == NULL);
    /* The epoch is over. */
    CHECK_OK(kiln_loader_next(loader, &batch));
    CHECK(batch == NULL);
  }
  /* A new epoch that is abandoned while the workers are busy, then release. */
  CHECK_OK(kiln_loader_start_epoch(loader, 2));
  kiln_loader_release(loader);
  kiln_transform_release(tr);
}

/* one_hot over the f32 inputs refuses them for every example: the first
 * batch fails at the first example of the epoch's order. */
static void check_refused_dtype(kiln_runtime* rt, int workers) {
  const int64_t shape[1] = {2};
  const kiln_attr config[2] = {kiln_attr_int("length", 12), kiln_attr_ints("shape", shape, 1)};
  kiln_data_source* src = NULL;
  kiln_transform* tr = one_hot(rt, 3, "input");
  kiln_loader_options o = loader_options(3, workers);
  kiln_loader* loader;
  kiln_example* batch = NULL;
  CHECK_OK(kiln_data_source_create(rt, "synthetic", config, 2, &src));
  if (!src) return;
  loader = open_loader(src, &tr, 1, &o);
  CHECK_OK(kiln_loader_start_epoch(loader, 0));
  CHECK_ERROR(kiln_loader_next(loader, &batch), KILN_ERR_DTYPE_MISMATCH, "example 0", "field 'input' is f32",
              "expected class indices");
  CHECK_OK(kiln_loader_next(loader, &batch));
  CHECK(batch == NULL);
  /* Released with a fresh epoch's failing batches in flight. */
  CHECK_OK(kiln_loader_start_epoch(loader, 1));
  kiln_loader_release(loader);
  kiln_transform_release(tr);
  kiln_data_source_release(src);
}

int main(void) {
  kiln_runtime* rt = open_runtime();
  kiln_data_source* src = index_source(rt, 20);
  int workers;
  for (workers = 0; workers <= 4; workers += 2) {
    check_failing_transform(rt, src, workers);
    check_refused_dtype(rt, workers);
  }
  kiln_data_source_release(src);
  kiln_runtime_release(rt);
  return check_report("pipeline/failures");
}
