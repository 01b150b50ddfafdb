/* Helpers shared by the loader tests: a runtime without default plugins,
 * and a check that a runtime still computes after something was refused. */
#ifndef KILN_LOADER_SUPPORT_H
#define KILN_LOADER_SUPPORT_H

#include "check.h"

/* A runtime that loads only what the test loads. */
static inline kiln_runtime* bare_runtime(void) {
  kiln_runtime_options options = {0};
  kiln_runtime* rt = NULL;
  options.size = sizeof options;
  options.skip_default_plugins = 1;
  CHECK_OK(kiln_runtime_create(&options, &rt));
  return rt;
}

/* 1 + 2 through the built-in op "add" gives 3. */
static inline void check_runtime_works(kiln_runtime* rt) {
  const int64_t shape[1] = {2};
  const kiln_op* add = NULL;
  kiln_tensor *a = NULL, *b = NULL, *sum = NULL;
  kiln_tensor* args[2];
  float out[2] = {0, 0};
  CHECK_OK(kiln_op_find(rt, "add", &add));
  CHECK_OK(kiln_tensor_full(rt, shape, 1, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &a));
  CHECK_OK(kiln_tensor_full(rt, shape, 1, 2.0, KILN_F32, KILN_DEVICE_CPU, 0, &b));
  args[0] = a;
  args[1] = b;
  CHECK_OK(kiln_op_call1(rt, add, args, 2, NULL, 0, &sum));
  CHECK_OK(kiln_tensor_read(sum, out, sizeof out));
  CHECK(out[0] == 3.0f && out[1] == 3.0f);
  kiln_tensor_release(sum);
  kiln_tensor_release(b);
  kiln_tensor_release(a);
}

/* The plugin count of `rt`. */
static inline size_t plugin_count(kiln_runtime* rt) {
  size_t n = 0;
  CHECK_OK(kiln_plugin_count(rt, &n));
  return n;
}

#endif /* KILN_LOADER_SUPPORT_H */
