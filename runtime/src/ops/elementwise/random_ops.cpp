// rand and randn: uniform and normal samples from the runtime's Philox
// stream. rand's element i uses word i (f64: words 2i and 2i+1, for 53 random
// bits); randn turns words 2k and 2k+1 into elements 2k and 2k+1 by
// Box-Muller. Results depend on the seed alone, not on the thread count.
#include <cmath>
#include <numbers>

#include "elementwise_common.hpp"
#include "random_words.hpp"

namespace kiln::elementwise {
namespace {

void random_infer(InferCall& c) {
  const Shape shape = shape_from_attr(c.op, c.op.attr_ints(c.attrs, "shape"), "shape");
  const DType dtype = c.op.attr_dtype(c.attrs, "dtype");
  KILN_CHECK(is_floating(dtype), Status::dtype_mismatch, "op '", c.op.name,
             "': dtype must be floating point (f32, f64, f16, bf16), got ", dtype_name(dtype));
  c.outputs.push_back({shape, dtype, c.device});
}

template <class T>
void rand_kernel(const KernelCall& c) {
  const double low = c.op.attr_real(c.attrs, "low"), high = c.op.attr_real(c.attrs, "high");
  T* out = c.outputs[0].data<T>();
  const int64_t n = c.outputs[0].numel();
  constexpr int64_t kWordsPerElement = std::is_same_v<T, double> ? 2 : 1;
  const GeneratorState range = c.runtime.reserve_random(blocks_for_words(n * kWordsPerElement));
  for_range(c.runtime, n, [=](int64_t begin, int64_t end) {
    RandomWords words(range);
    for (int64_t i = begin; i < end; ++i) {
      if constexpr (std::is_same_v<T, double>) {
        out[i] = low + (high - low) * Philox::to_unit_double(words[2 * i], words[2 * i + 1]);
      } else {
        const float u = Philox::to_unit_float(words[i]);
        out[i] = store_acc<T>(float(low) + float(high - low) * u);
      }
    }
  });
}

template <class T>
void randn_kernel(const KernelCall& c) {
  const double mean = c.op.attr_real(c.attrs, "mean"), stddev = c.op.attr_real(c.attrs, "std");
  T* out = c.outputs[0].data<T>();
  const int64_t n = c.outputs[0].numel();
  const int64_t pairs = (n + 1) / 2;
  const GeneratorState range = c.runtime.reserve_random(blocks_for_words(2 * pairs));
  using A = acc_t<T>;
  for_range(c.runtime, pairs, [=](int64_t begin, int64_t end) {
    RandomWords words(range);
    for (int64_t k = begin; k < end; ++k) {
      // 1 - u lies in (0, 1], so the logarithm stays finite.
      const A radius = std::sqrt(A(-2) * std::log(A(1) - A(Philox::to_unit_float(words[2 * k]))));
      const A angle = A(2 * std::numbers::pi) * A(Philox::to_unit_float(words[2 * k + 1]));
      out[2 * k] = store_acc<T>(A(mean) + A(stddev) * radius * std::cos(angle));
      if (2 * k + 1 < n) out[2 * k + 1] = store_acc<T>(A(mean) + A(stddev) * radius * std::sin(angle));
    }
  });
}

OpDef random_op(std::string name, std::vector<AttrSpec> distribution) {
  OpDef op;
  op.name = std::move(name);
  op.attrs = {attr_required("shape", AttrType::ints), attr_dtype("dtype", DType::f32), attr_string("device", "cpu")};
  op.attrs.insert(op.attrs.end(), distribution.begin(), distribution.end());
  op.infer = random_infer;
  op.dtype_input = -1;
  return op;
}

}  // namespace

void register_random_ops(OpRegistry& r) {
  OpDef rand = random_op("rand", {attr_real("low", 0.0), attr_real("high", 1.0)});
  set_cpu_kernels(rand, FloatTypes{}, []<class T>() -> KernelFn { return rand_kernel<T>; });
  r.add(std::move(rand));
  OpDef randn = random_op("randn", {attr_real("mean", 0.0), attr_real("std", 1.0)});
  set_cpu_kernels(randn, FloatTypes{}, []<class T>() -> KernelFn { return randn_kernel<T>; });
  r.add(std::move(randn));
}

}  // namespace kiln::elementwise
