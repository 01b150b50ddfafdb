#include "reductions.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kiln/error.hpp"

namespace kiln::dist {
namespace {

// max and min propagate NaN, as torch.maximum and NCCL do.
template <class A> A combine(A a, A b, ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::mean: return a + b;
    case ReduceOp::max:
      if constexpr (std::is_floating_point_v<A>) {
        if (std::isnan(a) || std::isnan(b)) return a + b;
      }
      return std::max(a, b);
    case ReduceOp::min:
      if constexpr (std::is_floating_point_v<A>) {
        if (std::isnan(a) || std::isnan(b)) return a + b;
      }
      return std::min(a, b);
  }
  return a;
}

template <class T, ReduceOp Op> void reduce(void* out, const void* a, const void* b, size_t n) {
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      o[i] = Op == ReduceOp::min ? (x[i] && y[i]) : (x[i] || y[i]);
    } else if constexpr (std::is_integral_v<T>) {
      // Sums wrap around in two's complement, like the GPU's.
      using U = std::make_unsigned_t<T>;
      o[i] = Op == ReduceOp::sum || Op == ReduceOp::mean ? T(U(x[i]) + U(y[i])) : combine(x[i], y[i], Op);
    } else {
      o[i] = store_acc<T>(combine(load_acc(x[i]), load_acc(y[i]), Op));
    }
  }
}

template <class T> ReduceFn for_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::mean: return reduce<T, ReduceOp::sum>;
    case ReduceOp::max: return reduce<T, ReduceOp::max>;
    case ReduceOp::min: return reduce<T, ReduceOp::min>;
  }
  return reduce<T, ReduceOp::sum>;
}

}  // namespace

ReduceFn reduce_function(DType dtype, ReduceOp op) {
  return visit_dtype(dtype, [&]<class T>() { return for_op<T>(op); });
}

void divide_in_place(void* data, DType dtype, size_t n, int divisor) {
  KILN_CHECK(is_floating(dtype), Status::dtype_mismatch, "mean of ", dtype_name(dtype),
             " tensors: only floating dtypes can be averaged (reduce with sum and divide)");
  visit_dtype(dtype, [&]<class T>() {
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      T* p = static_cast<T*>(data);
      const acc_t<T> d = acc_t<T>(divisor);
      for (size_t i = 0; i < n; ++i) p[i] = store_acc<T>(load_acc(p[i]) / d);
    }
  });
}

}  // namespace kiln::dist
