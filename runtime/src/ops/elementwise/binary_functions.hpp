// The element functions of the binary ops, written once for the CPU kernels
// (binary_ops.cpp, compare_ops.cpp, logical_ops.cpp) and the CUDA kernels
// (kernels/cuda/binary.cu, compare.cu). Each takes two values of the
// arithmetic type A (double for f64, float for f32, f16 and bf16, the
// integer type itself for integers and bool) and returns an A, or a bool
// for comparisons and logical functions. NaN rules are PyTorch's.
#pragma once

#include <cmath>
#include <type_traits>

#include "kiln/util/host_device.hpp"

namespace kiln::elementwise {

struct AddFn {
  template <class A> KILN_HOST_DEVICE A operator()(A x, A y) const { return x + y; }
};
struct SubFn {
  template <class A> KILN_HOST_DEVICE A operator()(A x, A y) const { return x - y; }
};
struct MulFn {
  template <class A> KILN_HOST_DEVICE A operator()(A x, A y) const { return x * y; }
};
struct DivFn {
  template <class A> KILN_HOST_DEVICE A operator()(A x, A y) const { return x / y; }
};

// Comparisons: IEEE rules (NaN is unequal to everything, itself included).
struct EqFn {
  template <class A> KILN_HOST_DEVICE bool operator()(A x, A y) const { return x == y; }
};
struct NeFn {
  template <class A> KILN_HOST_DEVICE bool operator()(A x, A y) const { return x != y; }
};
struct LtFn {
  template <class A> KILN_HOST_DEVICE bool operator()(A x, A y) const { return x < y; }
};
struct LeFn {
  template <class A> KILN_HOST_DEVICE bool operator()(A x, A y) const { return x <= y; }
};
struct GtFn {
  template <class A> KILN_HOST_DEVICE bool operator()(A x, A y) const { return x > y; }
};
struct GeFn {
  template <class A> KILN_HOST_DEVICE bool operator()(A x, A y) const { return x >= y; }
};

// Logical functions: any non-zero value (NaN included) is true.
struct LogicalAndFn {
  template <class A> KILN_HOST_DEVICE bool operator()(A x, A y) const { return x != A(0) && y != A(0); }
};
struct LogicalOrFn {
  template <class A> KILN_HOST_DEVICE bool operator()(A x, A y) const { return x != A(0) || y != A(0); }
};
struct LogicalNotFn {
  template <class A> KILN_HOST_DEVICE bool operator()(A x) const { return x == A(0); }
};

}  // namespace kiln::elementwise
