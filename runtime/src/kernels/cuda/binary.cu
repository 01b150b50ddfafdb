// add, sub, mul, div, minimum, maximum and remainder with broadcasting
// (operands in any layout), and add_scalar / mul_scalar, on a GPU, with the
// CPU's element functions (ops/elementwise/binary_functions.hpp). Integers
// compute in their own type, floating types in float (double for f64), as
// on the CPU.
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "kiln/runtime.hpp"
#include "map.cuh"
#include "../../memory/cuda/cuda_error.hpp"
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

// An integer remainder also raises a flag on the device for a zero divisor.
template <class T>
struct IntegerRemainder {
  int* zero_divisor;
  __device__ T operator()(T a, T b) const {
    if (b == T(0)) *zero_divisor = 1;
    return ew::RemainderFn{}(a, b);
  }
};

// Floating remainders are those of the CPU; an integer divisor with a zero
// fails as it does on the CPU, after one small read back (which waits for
// the kernel).
struct RemainderKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    if constexpr (!std::is_integral_v<T>) {
      BinaryKernels<ew::RemainderFn>::kernel<T>(c);
    } else {
      const Device device = c.outputs[0].device();
      const Tensor flag = c.runtime.full({1}, 0.0, DType::i32, device);
      cuda::Map<T, T, T>::run(c.op.name.c_str(), c.outputs[0], IntegerRemainder<T>{flag.data<int32_t>()},
                              c.inputs[0], c.inputs[1]);
      CudaDeviceGuard guard(device.index);
      int32_t zero_divisor = 0;
      KILN_CUDA_CHECK(cudaMemcpyAsync(&zero_divisor, flag.data<int32_t>(), sizeof zero_divisor,
                                      cudaMemcpyDeviceToHost, cuda::compute_stream(device.index)),
                      "reading the divisor check of ", c.op.name, " back from ", to_string(device));
      KILN_CUDA_CHECK(cudaStreamSynchronize(cuda::compute_stream(device.index)), "waiting for ", c.op.name, " on ",
                      to_string(device));
      KILN_CHECK(zero_divisor == 0, Status::invalid_argument, "op '", c.op.name,
                 "': integer division by zero (the divisor b ", to_string(c.inputs[1].shape()),
                 " has a zero element)");
    }
  }
};

}  // namespace

void register_cuda_binary_kernels(OpRegistry& r) {
  cuda::set_kernels<BinaryKernels<ew::AddFn>>(r, "add", cuda::ArithmeticTypes{});
  cuda::set_kernels<BinaryKernels<ew::SubFn>>(r, "sub", cuda::ArithmeticTypes{});
  cuda::set_kernels<BinaryKernels<ew::MulFn>>(r, "mul", cuda::ArithmeticTypes{});
  cuda::set_kernels<BinaryKernels<ew::DivFn>>(r, "div", cuda::FloatTypes{});
  cuda::set_kernels<BinaryKernels<ew::MaximumFn>>(r, "maximum", cuda::AllTypes{});
  cuda::set_kernels<BinaryKernels<ew::MinimumFn>>(r, "minimum", cuda::AllTypes{});
  cuda::set_kernels<RemainderKernels>(r, "remainder", cuda::ArithmeticTypes{});
  cuda::set_kernels<ScalarKernels<ew::AddFn>>(r, "add_scalar", cuda::ArithmeticTypes{});
  cuda::set_kernels<ScalarKernels<ew::MulFn>>(r, "mul_scalar", cuda::ArithmeticTypes{});
}

}  // namespace kiln
