// The unary ops and their backward ops on a GPU: f(input) and
// f_backward(grad, input) = grad * f'(input) for every function of
// ops/elementwise/unary_functions.hpp, the formulas the CPU runs, in the
// dtypes the CPU takes (floating types computed in float, or double for
// f64; integers in their own type).
#include <string>

#include "cuda_kernels.hpp"
#include "element.cuh"
#include "map.cuh"
#include "../../ops/elementwise/unary_functions.hpp"

namespace kiln {
namespace {

using cuda::from_math;
using cuda::to_math;
using elementwise::Domain;
using elementwise::Gradient;
using elementwise::UnaryParams;

template <Domain D> struct DomainTypes;
template <> struct DomainTypes<Domain::floating> { using type = cuda::FloatTypes; };
template <> struct DomainTypes<Domain::numeric> { using type = cuda::NumericTypes; };
template <> struct DomainTypes<Domain::all> { using type = cuda::AllTypes; };

template <class Fn, class T>
struct Forward {
  UnaryParams p;
  __device__ T operator()(T x) const { return from_math<T>(Fn::value(to_math(x), p)); }
};

template <class Fn, class T>
struct Backward {
  UnaryParams p;
  __device__ T operator()(T grad, T x) const { return from_math<T>(to_math(grad) * Fn::derivative(to_math(x), p)); }
};

template <class Fn>
struct UnaryKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    cuda::Map<T, T>::run_dense(Fn::name, c.outputs[0], Forward<Fn, T>{Fn::params(c.op, c.attrs)}, c.inputs[0]);
  }
};

template <class Fn>
struct UnaryBackwardKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    cuda::Map<T, T, T>::run_dense(Fn::name, c.outputs[0], Backward<Fn, T>{Fn::params(c.op, c.attrs)}, c.inputs[0],
                                  c.inputs[1]);
  }
};

template <class Fn>
void register_unary(OpRegistry& r) {
  cuda::set_kernels<UnaryKernels<Fn>>(r, Fn::name, typename DomainTypes<Fn::domain>::type{});
  if constexpr (Fn::gradient == Gradient::derivative)
    cuda::set_kernels<UnaryBackwardKernels<Fn>>(r, std::string(Fn::name) + "_backward", cuda::FloatTypes{});
}

template <class... Fn>
void register_functions(OpRegistry& r, elementwise::FunctionList<Fn...>) {
  (register_unary<Fn>(r), ...);
}

}  // namespace

void register_cuda_unary_kernels(OpRegistry& r) { register_functions(r, elementwise::UnaryFunctions{}); }

}  // namespace kiln
