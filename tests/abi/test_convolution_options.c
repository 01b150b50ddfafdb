/* kiln_runtime_options.direct_convolutions: by default a 3x3 stride-1 f32
 * convolution of a ResNet layer may run Winograd's algorithm (oneDNN's on
 * CPUs with AVX-512, kiln's on AVX2 with FMA), which rounds differently from
 * the direct kernels; with the option set it runs them. Both stay close to
 * each other. */
#include <math.h>

#include "check.h"

#define BATCH 32
#define CHANNELS 64
#define SIDE 16
#define INPUT_SIZE (BATCH * CHANNELS * SIDE * SIDE)
#define WEIGHT_SIZE (CHANNELS * CHANNELS * 3 * 3)

static float input[INPUT_SIZE], weight[WEIGHT_SIZE];
static float outputs[2][INPUT_SIZE]; /* same shape as the input: padding 1 */

/* Uniform values in [-1, 1) from a fixed linear congruential stream. */
static void fill(float* values, size_t n, uint32_t state) {
  size_t i;
  for (i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    values[i] = (float)(state >> 8) / 8388608.0f - 1.0f;
  }
}

static int cpu_has_winograd(void) {
  const int avx512_core = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return avx512_core || (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
}

/* conv2d(input, weight, padding 1) in a runtime made with `direct`, into `out`. */
static void convolve(int direct, float* out) {
  const int64_t input_shape[4] = {BATCH, CHANNELS, SIDE, SIDE};
  const int64_t weight_shape[4] = {CHANNELS, CHANNELS, 3, 3};
  const int64_t padding[2] = {1, 1};
  kiln_runtime_options options = {0};
  kiln_runtime* rt = NULL;
  const kiln_op* conv2d = NULL;
  kiln_tensor* in[2] = {NULL, NULL};
  kiln_tensor* y = NULL;
  kiln_attr attr = kiln_attr_ints("padding", padding, 2);
  options.size = sizeof options;
  options.direct_convolutions = direct;
  CHECK_OK(kiln_runtime_create(&options, &rt));
  CHECK_OK(kiln_op_find(rt, "conv2d", &conv2d));
  CHECK_OK(kiln_tensor_from_data(rt, input, sizeof input, input_shape, 4, KILN_F32, &in[0]));
  CHECK_OK(kiln_tensor_from_data(rt, weight, sizeof weight, weight_shape, 4, KILN_F32, &in[1]));
  CHECK_OK(kiln_op_call1(rt, conv2d, in, 2, &attr, 1, &y));
  CHECK_OK(kiln_tensor_read(y, out, sizeof outputs[0]));
  kiln_tensor_release(y);
  kiln_tensor_release(in[1]);
  kiln_tensor_release(in[0]);
  kiln_runtime_release(rt);
}

int main(void) {
  size_t i, differing = 0;
  double largest = 0.0, error = 0.0;
  fill(input, INPUT_SIZE, 1);
  fill(weight, WEIGHT_SIZE, 2);
  convolve(0, outputs[0]);
  convolve(1, outputs[1]);
  for (i = 0; i < INPUT_SIZE; ++i) {
    largest = fmax(largest, fabs(outputs[1][i]));
    error = fmax(error, fabs(outputs[0][i] - outputs[1][i]));
    differing += outputs[0][i] != outputs[1][i];
  }
  printf("largest output %g, largest difference %g, %zu of %d outputs differ\n", largest, error, differing,
         INPUT_SIZE);
  CHECK(largest > 1.0);
  CHECK(error <= 2e-5 * largest);
  if (cpu_has_winograd())
    CHECK(differing > 0);
  else
    printf("this CPU has neither AVX-512 nor AVX2 with FMA: no Winograd kernels to choose here\n");
  return check_failures ? 1 : 0;
}
