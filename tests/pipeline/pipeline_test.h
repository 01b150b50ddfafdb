/* Helpers of the input pipeline tests: a runtime, a "tensors" source whose
 * examples hold their own index, loader options, and whole epochs read back
 * field by field. Everything checks through check.h and keeps going. */
#ifndef KILN_PIPELINE_TEST_H
#define KILN_PIPELINE_TEST_H

/* nanosleep in strict C99. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kiln/kiln.h"

static inline kiln_runtime* open_runtime(void) {
  kiln_runtime* rt = NULL;
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  if (!rt) exit(check_report("runtime creation"));
  return rt;
}

/* A "tensors" source of n examples (n <= 4096) whose "input" (i64 scalar)
 * and "target" (i64 scalar) are both the example's index. */
static inline kiln_data_source* index_source(kiln_runtime* rt, int64_t n) {
  static int64_t values[4096];
  const int64_t shape[1] = {n};
  kiln_tensor* t = NULL;
  kiln_data_source* src = NULL;
  int64_t i;
  for (i = 0; i < n; ++i) values[i] = i;
  CHECK_OK(kiln_tensor_from_data(rt, values, (size_t)n * sizeof values[0], shape, 1, KILN_I64, &t));
  {
    const kiln_attr config[2] = {kiln_attr_tensor("input", t), kiln_attr_tensor("target", t)};
    CHECK_OK(kiln_data_source_create(rt, "tensors", config, 2, &src));
  }
  kiln_tensor_release(t);
  if (!src) exit(check_report("index source"));
  return src;
}

/* Options with everything but the batch size and the workers at defaults. */
static inline kiln_loader_options loader_options(int64_t batch_size, int num_workers) {
  kiln_loader_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.batch_size = batch_size;
  o.num_workers = num_workers;
  o.device = KILN_DEVICE_CPU;
  return o;
}

static inline kiln_loader* open_loader(kiln_data_source* src, kiln_transform* const* transforms, size_t n_transforms,
                                       const kiln_loader_options* options) {
  kiln_loader* loader = NULL;
  CHECK_OK(kiln_loader_create(src, transforms, n_transforms, options, &loader));
  if (!loader) exit(check_report("loader creation"));
  return loader;
}

static inline size_t dtype_bytes(kiln_dtype dtype) {
  switch (dtype) {
    case KILN_F64:
    case KILN_I64:
      return 8;
    case KILN_F32:
    case KILN_I32:
      return 4;
    case KILN_F16:
    case KILN_BF16:
      return 2;
    default:
      return 1;
  }
}

/* Reads the field `name` of `batch` and appends its bytes at dst + *used
 * (dst holds `capacity` bytes); returns its first dimension, -1 on failure. */
static inline int64_t append_field(const kiln_example* batch, const char* name, void* dst, size_t capacity,
                                   size_t* used) {
  kiln_tensor* t = NULL;
  int64_t dims[KILN_MAX_DIMS], numel = 0, rows = -1;
  int rank = 0;
  CHECK_OK(kiln_example_get(batch, name, &t));
  if (!t) return -1;
  CHECK_OK(kiln_tensor_rank(t, &rank));
  CHECK_OK(kiln_tensor_shape(t, dims, KILN_MAX_DIMS));
  CHECK_OK(kiln_tensor_numel(t, &numel));
  CHECK(rank >= 1);
  if (rank >= 1 && numel >= 0) {
    kiln_dtype dtype = KILN_F32;
    size_t bytes;
    CHECK_OK(kiln_tensor_dtype(t, &dtype));
    bytes = (size_t)numel * dtype_bytes(dtype);
    CHECK(*used + bytes <= capacity);
    if (*used + bytes <= capacity && kiln_tensor_read(t, (char*)dst + *used, bytes) == KILN_OK) {
      *used += bytes;
      rows = dims[0];
    }
  }
  kiln_tensor_release(t);
  return rows;
}

/* Runs epoch `epoch` to its end, appending the field `name` of every batch
 * to dst (`capacity` bytes); *bytes receives the bytes written. Returns the
 * number of batches, or -1 when one could not be read. */
static inline int64_t read_epoch(kiln_loader* loader, int64_t epoch, const char* name, void* dst, size_t capacity,
                                 size_t* bytes) {
  int64_t batches = 0;
  *bytes = 0;
  CHECK_OK(kiln_loader_start_epoch(loader, epoch));
  for (;;) {
    kiln_example* batch = NULL;
    int64_t rows;
    CHECK_OK(kiln_loader_next(loader, &batch));
    if (!batch) return batches;
    rows = append_field(batch, name, dst, capacity, bytes);
    kiln_example_release(batch);
    if (rows < 0) return -1;
    ++batches;
  }
}

/* The example indices of one epoch of an index_source loader, in delivery
 * order, into `indices` (room for `capacity`); returns how many. */
static inline int64_t epoch_indices(kiln_loader* loader, int64_t epoch, int64_t* indices, int64_t capacity) {
  size_t bytes = 0;
  read_epoch(loader, epoch, "input", indices, (size_t)capacity * sizeof indices[0], &bytes);
  return (int64_t)(bytes / sizeof indices[0]);
}

/* 1 when indices[0..n) holds each of `expected` (e_n entries) exactly once. */
static inline int same_set(const int64_t* indices, int64_t n, const int64_t* expected, int64_t e_n) {
  static unsigned char seen[4096];
  int64_t i;
  if (n != e_n) return 0;
  memset(seen, 0, sizeof seen);
  for (i = 0; i < e_n; ++i) seen[expected[i]] = 1;
  for (i = 0; i < n; ++i) {
    if (indices[i] < 0 || indices[i] >= 4096 || seen[indices[i]] != 1) return 0;
    seen[indices[i]] = 2;
  }
  return 1;
}

#endif /* KILN_PIPELINE_TEST_H */
