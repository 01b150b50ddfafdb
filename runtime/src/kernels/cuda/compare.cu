// The comparisons (eq, ne, lt, le, gt, ge) and logical ops (logical_and,
// logical_or, logical_not) on a GPU: bool outputs from operands of any
// dtype, broadcast in any layout, with the CPU's element functions
// (ops/elementwise/binary_functions.hpp).
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "map.cuh"
#include "../../ops/elementwise/binary_functions.hpp"

namespace kiln {
namespace {

using cuda::to_math;
namespace ew = elementwise;

template <class Fn, class T>
struct Predicate {
  __device__ bool operator()(T a, T b) const { return Fn{}(to_math(a), to_math(b)); }
};

template <class Fn>
struct PredicateKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    cuda::Map<bool, T, T>::run(c.op.name.c_str(), c.outputs[0], Predicate<Fn, T>{}, c.inputs[0], c.inputs[1]);
  }
};

template <class T>
struct Not {
  __device__ bool operator()(T x) const { return ew::LogicalNotFn{}(to_math(x)); }
};

struct NotKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    cuda::Map<bool, T>::run_dense("logical_not", c.outputs[0], Not<T>{}, c.inputs[0]);
  }
};

}  // namespace

void register_cuda_compare_kernels(OpRegistry& r) {
  cuda::set_kernels<PredicateKernels<ew::EqFn>>(r, "eq", cuda::AllTypes{});
  cuda::set_kernels<PredicateKernels<ew::NeFn>>(r, "ne", cuda::AllTypes{});
  cuda::set_kernels<PredicateKernels<ew::LtFn>>(r, "lt", cuda::AllTypes{});
  cuda::set_kernels<PredicateKernels<ew::LeFn>>(r, "le", cuda::AllTypes{});
  cuda::set_kernels<PredicateKernels<ew::GtFn>>(r, "gt", cuda::AllTypes{});
  cuda::set_kernels<PredicateKernels<ew::GeFn>>(r, "ge", cuda::AllTypes{});
  cuda::set_kernels<PredicateKernels<ew::LogicalAndFn>>(r, "logical_and", cuda::AllTypes{});
  cuda::set_kernels<PredicateKernels<ew::LogicalOrFn>>(r, "logical_or", cuda::AllTypes{});
  cuda::set_kernels<NotKernels>(r, "logical_not", cuda::AllTypes{});
}

}  // namespace kiln
