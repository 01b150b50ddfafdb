/* Determinism: every batch of epochs 0 and 1 (inputs through random_crop
 * and random_hflip, so the transform seeds matter) is the same with 0, 1
 * and 4 workers; shuffled epochs differ in order, and unshuffled epochs in
 * their random transforms. */
#include "pipeline_test.h"

enum { kLength = 37, kBatch = 5, kInputFloats = 3 * 6 * 6 };
#define EPOCH_BYTES ((size_t)kLength * kInputFloats * sizeof(float))

static kiln_data_source* synthetic_source(kiln_runtime* rt) {
  const int64_t shape[3] = {3, 8, 8};
  const kiln_attr config[3] = {kiln_attr_int("length", kLength), kiln_attr_ints("shape", shape, 3),
                               kiln_attr_int("seed", 5)};
  kiln_data_source* src = NULL;
  CHECK_OK(kiln_data_source_create(rt, "synthetic", config, 3, &src));
  if (!src) exit(check_report("synthetic source"));
  return src;
}

static void make_transforms(kiln_runtime* rt, kiln_transform* transforms[2]) {
  const int64_t size[1] = {6};
  const kiln_attr crop[2] = {kiln_attr_ints("size", size, 1), kiln_attr_int("padding", 1)};
  const kiln_attr flip[1] = {kiln_attr_float("p", 0.5)};
  CHECK_OK(kiln_transform_create(rt, "random_crop", crop, 2, &transforms[0]));
  CHECK_OK(kiln_transform_create(rt, "random_hflip", flip, 1, &transforms[1]));
  if (!transforms[0] || !transforms[1]) exit(check_report("transforms"));
}

/* Epochs 0 and 1 of a loader with `workers` workers, into epochs[0..1]. */
static void read_two_epochs(kiln_data_source* src, kiln_transform* const* transforms, int shuffle, int workers,
                            float* epochs[2]) {
  kiln_loader_options o = loader_options(kBatch, workers);
  kiln_loader* loader;
  int64_t epoch;
  o.shuffle = shuffle;
  o.seed = 1234;
  loader = open_loader(src, transforms, 2, &o);
  for (epoch = 0; epoch < 2; ++epoch) {
    size_t bytes = 0;
    CHECK(read_epoch(loader, epoch, "input", epochs[epoch], EPOCH_BYTES, &bytes) == (kLength + kBatch - 1) / kBatch);
    CHECK(bytes == EPOCH_BYTES);
  }
  kiln_loader_release(loader);
}

static void check_determinism(kiln_data_source* src, kiln_transform* const* transforms, int shuffle) {
  const int workers[3] = {0, 1, 4};
  float* runs[3][2];
  int w, e;
  for (w = 0; w < 3; ++w)
    for (e = 0; e < 2; ++e) runs[w][e] = calloc(1, EPOCH_BYTES);
  for (w = 0; w < 3; ++w) read_two_epochs(src, transforms, shuffle, workers[w], runs[w]);
  for (w = 1; w < 3; ++w)
    for (e = 0; e < 2; ++e) CHECK(memcmp(runs[0][e], runs[w][e], EPOCH_BYTES) == 0);
  /* A new epoch is a new order (shuffled) or new crops and flips (not). */
  CHECK(memcmp(runs[0][0], runs[0][1], EPOCH_BYTES) != 0);
  for (w = 0; w < 3; ++w)
    for (e = 0; e < 2; ++e) free(runs[w][e]);
}

/* The same options give the same epoch; another seed another one. */
static void check_seed(kiln_data_source* src, kiln_transform* const* transforms) {
  kiln_loader_options o = loader_options(kBatch, 2);
  float* a = calloc(1, EPOCH_BYTES);
  float* b = calloc(1, EPOCH_BYTES);
  size_t bytes = 0;
  kiln_loader* loader;
  o.shuffle = 1;
  o.seed = 1;
  loader = open_loader(src, transforms, 2, &o);
  read_epoch(loader, 0, "input", a, EPOCH_BYTES, &bytes);
  read_epoch(loader, 0, "input", b, EPOCH_BYTES, &bytes);
  CHECK(memcmp(a, b, EPOCH_BYTES) == 0);
  kiln_loader_release(loader);
  o.seed = 2;
  loader = open_loader(src, transforms, 2, &o);
  read_epoch(loader, 0, "input", b, EPOCH_BYTES, &bytes);
  CHECK(memcmp(a, b, EPOCH_BYTES) != 0);
  kiln_loader_release(loader);
  free(a);
  free(b);
}

int main(void) {
  kiln_runtime* rt = open_runtime();
  kiln_data_source* src = synthetic_source(rt);
  kiln_transform* transforms[2] = {NULL, NULL};
  make_transforms(rt, transforms);
  check_determinism(src, transforms, 1);
  check_determinism(src, transforms, 0);
  check_seed(src, transforms);
  kiln_transform_release(transforms[0]);
  kiln_transform_release(transforms[1]);
  kiln_data_source_release(src);
  kiln_runtime_release(rt);
  return check_report("pipeline/determinism");
}
