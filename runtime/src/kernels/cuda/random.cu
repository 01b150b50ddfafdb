// rand, randn, dropout and dropout_backward on a GPU. Each draws the same
// Philox words for the same elements as its CPU kernel, so one seed gives the
// same numbers (and the same dropout mask) on both devices: rand's element i
// uses word i (f64: words 2i and 2i + 1), randn turns words 2k and 2k + 1
// into elements 2k and 2k + 1 by Box-Muller, dropout keeps element i when
// word i, as a unit float, is at least p. Where the CPU rounds each step
// (a scale and an offset), the GPU does too rather than fusing them.
#include <cstring>
#include <numbers>

#include "cuda_kernels.hpp"
#include "element.cuh"
#include "fill.hpp"
#include "map.cuh"
#include "philox.cuh"
#include "kiln/runtime.hpp"
#include "../../ops/elementwise/random_words.hpp"

namespace kiln {
namespace {

using cuda::from_math;
using cuda::to_math;
using elementwise::blocks_for_words;

// The f64 rand uses two words per element: a block holds two elements.
template <class T>
struct UniformBlock {
  T* out;
  int64_t n;
  double low, high;
  __device__ void operator()(int64_t b, const uint32_t (&w)[4]) const {
    if constexpr (std::is_same_v<T, double>) {
      for (int k = 0; k < 2 && 2 * b + k < n; ++k)
        out[2 * b + k] = __dadd_rn(low, __dmul_rn(high - low, Philox::to_unit_double(w[2 * k], w[2 * k + 1])));
    } else {
      for (int k = 0; k < 4 && 4 * b + k < n; ++k)
        out[4 * b + k] = from_math<T>(__fadd_rn(float(low), __fmul_rn(float(high - low), Philox::to_unit_float(w[k]))));
    }
  }
};

struct RandKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    Tensor& out = c.outputs[0];
    const int64_t n = out.numel();
    constexpr int64_t kWordsPerElement = std::is_same_v<T, double> ? 2 : 1;
    const uint64_t blocks = blocks_for_words(n * kWordsPerElement);
    const GeneratorState range = c.runtime.reserve_random(blocks);
    const UniformBlock<T> f{out.data<T>(), n, c.op.attr_real(c.attrs, "low"), c.op.attr_real(c.attrs, "high")};
    cuda::run_philox_blocks("rand", out.device().index, range, int64_t(blocks), f);
  }
};

// Two Box-Muller pairs per block.
template <class T>
struct NormalBlock {
  using A = acc_t<T>;
  T* out;
  int64_t n;
  double mean, stddev;
  __device__ void operator()(int64_t b, const uint32_t (&w)[4]) const {
    for (int k = 0; k < 2; ++k) {
      const int64_t i = 4 * b + 2 * k;
      if (i >= n) return;
      // 1 - u lies in (0, 1], so the logarithm stays finite.
      const A radius = sqrt(A(-2) * log(A(1) - A(Philox::to_unit_float(w[2 * k]))));
      const A angle = A(2 * std::numbers::pi) * A(Philox::to_unit_float(w[2 * k + 1]));
      out[i] = from_math<T>(A(mean) + A(stddev) * radius * cos(angle));
      if (i + 1 < n) out[i + 1] = from_math<T>(A(mean) + A(stddev) * radius * sin(angle));
    }
  }
};

struct RandnKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    Tensor& out = c.outputs[0];
    const int64_t n = out.numel();
    const uint64_t blocks = blocks_for_words(2 * ((n + 1) / 2));
    const GeneratorState range = c.runtime.reserve_random(blocks);
    const NormalBlock<T> f{out.data<T>(), n, c.op.attr_real(c.attrs, "mean"), c.op.attr_real(c.attrs, "std")};
    cuda::run_philox_blocks("randn", out.device().index, range, int64_t(blocks), f);
  }
};

template <class T>
struct DropoutBlock {
  const T* in;
  T* out;
  uint8_t* mask;
  int64_t n;
  float threshold;
  acc_t<T> scale;
  __device__ void operator()(int64_t b, const uint32_t (&w)[4]) const {
    for (int k = 0; k < 4 && 4 * b + k < n; ++k) {
      const int64_t i = 4 * b + k;
      const bool keep = Philox::to_unit_float(w[k]) >= threshold;
      mask[i] = keep;
      out[i] = from_math<T>(keep ? to_math(in[i]) * scale : acc_t<T>(0));
    }
  }
};

struct DropoutKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    const Tensor& in = c.inputs[0];
    Tensor& out = c.outputs[0];
    Tensor& mask = c.outputs[1];
    const int64_t n = in.numel();
    const double p = c.op.attr_real(c.attrs, "p");
    const int device = out.device().index;
    if (!c.op.attr_bool(c.attrs, "training") || p <= 0.0) {
      CudaDeviceGuard guard(device);
      KILN_CUDA_CHECK(cudaMemcpyAsync(out.raw_data(), in.raw_data(), in.nbytes(), cudaMemcpyDeviceToDevice,
                                      cuda::compute_stream(device)),
                      "copying the input of dropout (no elements dropped) on ", to_string(out.device()));
      cuda::fill(mask, 1.0);
      return;
    }
    const uint64_t blocks = blocks_for_words(n);
    const GeneratorState range = c.runtime.reserve_random(blocks);
    const DropoutBlock<T> f{in.data<T>(), out.data<T>(), mask.data<uint8_t>(), n, float(p), acc_t<T>(1.0 / (1.0 - p))};
    cuda::run_philox_blocks("dropout", device, range, int64_t(blocks), f);
  }
};

template <class T>
struct MaskedScale {
  acc_t<T> scale;
  __device__ T operator()(T grad, uint8_t keep) const {
    return from_math<T>(keep ? to_math(grad) * scale : acc_t<T>(0));
  }
};

struct DropoutBackwardKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    const MaskedScale<T> f{acc_t<T>(c.op.attr_real(c.attrs, "scale"))};
    cuda::Map<T, T, uint8_t>::run_dense("dropout_backward", c.outputs[0], f, c.inputs[0], c.inputs[1]);
  }
};

}  // namespace

void register_cuda_random_kernels(OpRegistry& r) {
  cuda::set_kernels<RandKernels>(r, "rand", cuda::FloatTypes{});
  cuda::set_kernels<RandnKernels>(r, "randn", cuda::FloatTypes{});
  cuda::set_kernels<DropoutKernels>(r, "dropout", cuda::FloatTypes{});
  cuda::set_kernels<DropoutBackwardKernels>(r, "dropout_backward", cuda::FloatTypes{});
}

}  // namespace kiln
