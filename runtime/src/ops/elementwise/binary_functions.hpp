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

template <class A> KILN_HOST_DEVICE inline bool is_nan(A x) {
  if constexpr (std::is_floating_point_v<A>) return std::isnan(x);
  else return false;
}

// torch.maximum and torch.minimum: a NaN operand wins (a's first); between
// equal values (0 and -0) the first operand, as std::max and std::min give.
struct MaximumFn {
  template <class A> KILN_HOST_DEVICE A operator()(A x, A y) const {
    if (is_nan(x)) return x;
    if (is_nan(y)) return y;
    return x < y ? y : x;
  }
};
struct MinimumFn {
  template <class A> KILN_HOST_DEVICE A operator()(A x, A y) const {
    if (is_nan(x)) return x;
    if (is_nan(y)) return y;
    return y < x ? y : x;
  }
};

// torch.remainder, Python's %: the result has the divisor's sign (or is 0).
// Floating types: fmod, moved by one divisor when the signs differ (x % 0
// is NaN). Integers: a zero divisor gives 0 here; the kernels detect it and
// fail, as PyTorch does on the CPU. x % -1 is 0 without computing the
// quotient, which overflows for the most negative x.
struct RemainderFn {
  template <class A> KILN_HOST_DEVICE A operator()(A x, A y) const {
    if constexpr (std::is_floating_point_v<A>) {
      A r = std::fmod(x, y);
      if (r != A(0) && ((r < A(0)) != (y < A(0)))) r += y;
      return r;
    } else {
      if (y == A(0) || y == A(-1)) return A(0);
      A r = x % y;
      if (r != A(0) && ((r < A(0)) != (y < A(0)))) r += y;
      return r;
    }
  }
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
