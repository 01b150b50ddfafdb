/* kiln_module_build with the core layers (Conv2d, Flatten, Linear) found by
 * a runtime with default options: a layer that does not fit the shapes
 * reaching it fails with its path, index, type, input shapes and reason. */
#include <string.h>

#include "check.h"

static kiln_tensor_desc image(int64_t channels, int64_t size) {
  kiln_tensor_desc d;
  memset(&d, 0, sizeof d);
  d.rank = 4;
  d.dims[0] = 1;
  d.dims[1] = channels;
  d.dims[2] = size;
  d.dims[3] = size;
  d.dtype = KILN_F32;
  return d;
}

static void append_conv(kiln_runtime* rt, kiln_module* seq, int64_t in, int64_t out, int64_t kernel, int64_t stride,
                        int64_t padding) {
  kiln_module* conv = NULL;
  const kiln_attr config[5] = {kiln_attr_int("in_channels", in), kiln_attr_int("out_channels", out),
                               kiln_attr_ints("kernel_size", &kernel, 1), kiln_attr_ints("stride", &stride, 1),
                               kiln_attr_ints("padding", &padding, 1)};
  CHECK_OK(kiln_module_create(rt, "Conv2d", config, 5, &conv));
  CHECK_OK(kiln_sequential_append(seq, NULL, conv));
  kiln_module_release(conv);
}

static void append_layer(kiln_runtime* rt, kiln_module* seq, const char* type, const kiln_attr* config, size_t n) {
  kiln_module* layer = NULL;
  CHECK_OK(kiln_module_create(rt, type, config, n, &layer));
  CHECK_OK(kiln_sequential_append(seq, NULL, layer));
  kiln_module_release(layer);
}

/* A 5x5 kernel without padding does not fit a 4x4 feature map. */
static void conv_kernel_larger_than_its_input(kiln_runtime* rt) {
  kiln_module* seq = NULL;
  const kiln_tensor_desc in = image(3, 8);
  kiln_tensor_desc out[1];
  size_t n = 0;
  CHECK_OK(kiln_sequential_create(rt, &seq));
  append_conv(rt, seq, 3, 64, 3, 2, 1); /* 8x8 -> 4x4 */
  append_conv(rt, seq, 64, 64, 5, 1, 0);
  CHECK_ERROR(kiln_module_build(seq, &in, 1, out, 1, &n), KILN_ERR_SHAPE_MISMATCH,
              "layer '1' (Conv2d, index 1 in Sequential) on input f32[1, 64, 4, 4]: ");
  kiln_module_release(seq);
}

/* Flatten gives 4 * 4 * 4 = 64 features to a Linear that expects 100. */
static void linear_in_features_do_not_match(kiln_runtime* rt) {
  const kiln_attr expects_100[2] = {kiln_attr_int("in_features", 100), kiln_attr_int("out_features", 10)};
  const kiln_attr expects_64[2] = {kiln_attr_int("in_features", 64), kiln_attr_int("out_features", 10)};
  const kiln_tensor_desc in = image(3, 4);
  kiln_tensor_desc out[1];
  kiln_module* seq = NULL;
  const char* reason;
  size_t n = 0;
  CHECK_OK(kiln_sequential_create(rt, &seq));
  append_conv(rt, seq, 3, 4, 3, 1, 1);
  append_layer(rt, seq, "Flatten", NULL, 0);
  append_layer(rt, seq, "Linear", expects_100, 2);
  CHECK_ERROR(kiln_module_build(seq, &in, 1, out, 1, &n), KILN_ERR_SHAPE_MISMATCH,
              "layer '2' (Linear, index 2 in Sequential) on input f32[1, 64]: ");
  /* The reason, after the input shapes, says what size the Linear got. */
  reason = strstr(kiln_last_error(), "f32[1, 64]: ");
  CHECK(reason && strstr(reason + strlen("f32[1, 64]: "), "64") && strstr(reason, "100"));
  kiln_module_release(seq);

  CHECK_OK(kiln_sequential_create(rt, &seq));
  append_conv(rt, seq, 3, 4, 3, 1, 1);
  append_layer(rt, seq, "Flatten", NULL, 0);
  append_layer(rt, seq, "Linear", expects_64, 2);
  CHECK_OK(kiln_module_build(seq, &in, 1, out, 1, &n));
  CHECK(n == 1 && out[0].rank == 2 && out[0].dims[0] == 1 && out[0].dims[1] == 10 && out[0].dtype == KILN_F32);
  kiln_module_release(seq);
}

int main(void) {
  kiln_runtime* rt = NULL;
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  if (!rt) return check_report("modules/build_layers");
  conv_kernel_larger_than_its_input(rt);
  linear_in_features_do_not_match(rt);
  kiln_runtime_release(rt);
  return check_report("modules/build_layers");
}
