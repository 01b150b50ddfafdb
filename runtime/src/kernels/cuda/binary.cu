// add, sub, mul and div with broadcasting (operands in any layout), and
// add_scalar / mul_scalar, on a GPU, with the CPU's element functions
// (ops/elementwise/binary_functions.hpp). Integers compute in their own
// type, floating types in float (double for f64), as on the CPU.
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "map.cuh"
#include "../../ops/elementwise/binary_functions.hpp"

namespace kiln {
namespace {

using cuda::from_math;
using cuda::math_t;
using cuda::to_math;
namespace ew = elementwise;

template <class Fn, class T>
struct Binary {
  __device__ T operator()(T a, T b) const { return from_math<T>(Fn{}(to_math(a), to_math(b))); }
};

// The CPU converts the attribute to the arithmetic type once, on the host.
template <class Fn, class T>
struct WithScalar {
  math_t<T> scalar;
  __device__ T operator()(T x) const { return from_math<T>(Fn{}(to_math(x), scalar)); }
};

template <class Fn>
struct BinaryKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    cuda::Map<T, T, T>::run(c.op.name.c_str(), c.outputs[0], Binary<Fn, T>{}, c.inputs[0], c.inputs[1]);
  }
};

template <class Fn>
struct ScalarKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    const auto scalar = static_cast<math_t<T>>(c.op.attr_real(c.attrs, "value"));
    cuda::Map<T, T>::run_dense(c.op.name.c_str(), c.outputs[0], WithScalar<Fn, T>{scalar}, c.inputs[0]);
  }
};

}  // namespace

void register_cuda_binary_kernels(OpRegistry& r) {
  cuda::set_kernels<BinaryKernels<ew::AddFn>>(r, "add", cuda::ArithmeticTypes{});
  cuda::set_kernels<BinaryKernels<ew::SubFn>>(r, "sub", cuda::ArithmeticTypes{});
  cuda::set_kernels<BinaryKernels<ew::MulFn>>(r, "mul", cuda::ArithmeticTypes{});
  cuda::set_kernels<BinaryKernels<ew::DivFn>>(r, "div", cuda::FloatTypes{});
  cuda::set_kernels<ScalarKernels<ew::AddFn>>(r, "add_scalar", cuda::ArithmeticTypes{});
  cuda::set_kernels<ScalarKernels<ew::MulFn>>(r, "mul_scalar", cuda::ArithmeticTypes{});
}

}  // namespace kiln
