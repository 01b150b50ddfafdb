/* Helpers of the kiln-data tests: files written into the test's own temp
 * folder (KILN_DATA_TEST_DIR), sources made from attributes, and example
 * fields read back. Everything checks through check.h and keeps going. */
#ifndef KILN_DATA_TEST_H
#define KILN_DATA_TEST_H

/* mkdir and pthreads in strict C99. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "check.h"
#include "kiln/kiln.h"

/* A path inside the test's temp folder (created on first use); the
 * returned buffer is one of a few rotating static buffers. */
static inline const char* temp_path(const char* name) {
  static char buffers[4][1024];
  static int next = 0;
  char* path = buffers[next++ % 4];
  mkdir(KILN_DATA_TEST_DIR, 0755);
  snprintf(path, sizeof buffers[0], "%s/%s", KILN_DATA_TEST_DIR, name);
  return path;
}

static inline void write_file(const char* path, const void* data, size_t n) {
  FILE* f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fwrite(data, 1, n, f) == n);
  fclose(f);
}

static inline void write_gzip(const char* path, const void* data, size_t n) {
  gzFile f = gzopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(gzwrite(f, data, (unsigned)n) == (int)n);
  gzclose(f);
}

static inline void write_text(const char* path, const char* text) { write_file(path, text, strlen(text)); }

static inline kiln_runtime* open_runtime(void) {
  kiln_runtime* rt = NULL;
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  if (!rt) exit(check_report("runtime creation"));
  return rt;
}

static inline void describe(const kiln_tensor* t, kiln_tensor_desc* desc) {
  memset(desc, 0, sizeof *desc);
  CHECK_OK(kiln_tensor_rank(t, &desc->rank));
  CHECK_OK(kiln_tensor_shape(t, desc->dims, KILN_MAX_DIMS));
  CHECK_OK(kiln_tensor_dtype(t, &desc->dtype));
}

/* Reads the field `name` of `ex` into `dst` (exactly `n` bytes) and its
 * description into *desc; returns 1 on success. */
static inline int read_field(const kiln_example* ex, const char* name, kiln_tensor_desc* desc, void* dst, size_t n) {
  kiln_tensor* t = NULL;
  int ok = 0;
  CHECK_OK(kiln_example_get(ex, name, &t));
  if (!t) return 0;
  describe(t, desc);
  if (kiln_tensor_read(t, dst, n) == KILN_OK) ok = 1;
  CHECK(ok);
  kiln_tensor_release(t);
  return ok;
}

/* The field `name` of example `index` of `src`, as read_field. */
static inline int read_example_field(const kiln_data_source* src, int64_t index, const char* name,
                                     kiln_tensor_desc* desc, void* dst, size_t n) {
  kiln_example* ex = NULL;
  int ok = 0;
  CHECK_OK(kiln_data_source_get(src, index, &ex));
  if (ex) ok = read_field(ex, name, desc, dst, n);
  kiln_example_release(ex);
  return ok;
}

/* desc has the dtype and the `rank` dims that follow. */
static inline int desc_is(const kiln_tensor_desc* desc, kiln_dtype dtype, int rank, const int64_t* dims) {
  int i;
  if (desc->dtype != dtype || desc->rank != rank) return 0;
  for (i = 0; i < rank; ++i)
    if (desc->dims[i] != dims[i]) return 0;
  return 1;
}

/* The i64 target of example `index`. */
static inline int64_t example_target(const kiln_data_source* src, int64_t index) {
  kiln_tensor_desc desc;
  int64_t target = -1;
  read_example_field(src, index, "target", &desc, &target, sizeof target);
  CHECK(desc_is(&desc, KILN_I64, 0, NULL));
  return target;
}

#endif /* KILN_DATA_TEST_H */
