/* Helpers of the module tests: a runtime with the test layers loaded,
 * tensors from arrays, and layers of the test plugin (see
 * modules_test_plugin.c). MODULES_TEST_PLUGIN is the plugin's path. */
#ifndef KILN_MODULE_TEST_H
#define KILN_MODULE_TEST_H

#include <math.h>
#include <string.h>

#include "check.h"

/* A runtime that loads only the test plugin. */
static inline kiln_runtime* test_runtime(void) {
  kiln_runtime_options options;
  kiln_runtime* rt = NULL;
  memset(&options, 0, sizeof options);
  options.size = sizeof options;
  options.seed = 7;
  options.skip_default_plugins = 1;
  CHECK_OK(kiln_runtime_create(&options, &rt));
  CHECK_OK(kiln_plugin_load(rt, MODULES_TEST_PLUGIN));
  return rt;
}

static inline kiln_tensor* tensor_f32(kiln_runtime* rt, const float* data, const int64_t* shape, int rank) {
  kiln_tensor* t = NULL;
  int64_t n = 1;
  int d;
  for (d = 0; d < rank; ++d) n *= shape[d];
  CHECK_OK(kiln_tensor_from_data(rt, data, (size_t)n * sizeof(float), shape, rank, KILN_F32, &t));
  return t;
}

/* An Affine layer whose weight and bias are `weight` and `bias` (`features` each). */
static inline kiln_module* affine(kiln_runtime* rt, int64_t features, const float* weight, const float* bias) {
  kiln_module* m = NULL;
  kiln_tensor* p = NULL;
  const char* name = NULL;
  const kiln_attr config = kiln_attr_int("features", features);
  void* data = NULL;
  CHECK_OK(kiln_module_create(rt, "Affine", &config, 1, &m));
  if (!m) return NULL;
  CHECK_OK(kiln_module_parameter(m, 0, &name, &p));
  CHECK_OK(kiln_tensor_data(p, &data));
  if (data) memcpy(data, weight, (size_t)features * sizeof(float));
  kiln_tensor_release(p);
  CHECK_OK(kiln_module_parameter(m, 1, &name, &p));
  CHECK_OK(kiln_tensor_data(p, &data));
  if (data) memcpy(data, bias, (size_t)features * sizeof(float));
  kiln_tensor_release(p);
  return m;
}

/* A parameter-free layer of the test plugin ("ModeScale", "Split"). */
static inline kiln_module* plain_layer(kiln_runtime* rt, const char* type) {
  kiln_module* m = NULL;
  CHECK_OK(kiln_module_create(rt, type, NULL, 0, &m));
  return m;
}

static inline kiln_module* op_module(kiln_runtime* rt, const char* op_name) {
  const kiln_op* op = NULL;
  kiln_module* m = NULL;
  CHECK_OK(kiln_op_find(rt, op_name, &op));
  CHECK_OK(kiln_module_from_op(rt, op, NULL, 0, &m));
  return m;
}

/* The module's output for one input, read into `out` (n floats). */
static inline void forward_read(kiln_module* m, kiln_tensor* x, float* out, size_t n) {
  kiln_tensor* y = NULL;
  CHECK_OK(kiln_module_forward1(m, &x, 1, &y));
  if (y) CHECK_OK(kiln_tensor_read(y, out, n * sizeof(float)));
  kiln_tensor_release(y);
}

static inline void check_close(const float* got, const float* want, size_t n, const char* what) {
  size_t i;
  for (i = 0; i < n; ++i) {
    if (fabs((double)got[i] - (double)want[i]) <= 1e-5 + 1e-4 * fabs((double)want[i])) continue;
    fprintf(stderr, "%s: element %zu is %g, expected %g\n", what, i, (double)got[i], (double)want[i]);
    ++check_failures;
    return;
  }
}

#endif /* KILN_MODULE_TEST_H */
