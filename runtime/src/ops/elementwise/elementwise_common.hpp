// Pieces shared by the element-wise op family: dtype lists, the arithmetic
// type of each element type, element conversion, the CPU range split, a
// walker over broadcast operands, and the registration functions of each file.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/ops/helpers.hpp"

namespace kiln::elementwise {

// Element-type lists for set_cpu_kernels.
template <class... T> struct TypeList {};
using FloatTypes = TypeList<float, double, Half, BFloat16>;
using ArithmeticTypes = TypeList<float, double, Half, BFloat16, int32_t, int64_t>;
using NumericTypes = TypeList<float, double, Half, BFloat16, int32_t, int64_t, uint8_t>;
using AllTypes = TypeList<float, double, Half, BFloat16, int32_t, int64_t, uint8_t, bool>;

// Sets op's CPU kernel for each listed element type T to make.operator()<T>(),
// which returns that type's kernel; only the listed types are instantiated.
template <class... T, class Make>
void set_cpu_kernels(OpDef& op, TypeList<T...>, Make make) {
  (op.set_kernel(DeviceType::cpu, dtype_of<T>::value, make.template operator()<T>()), ...);
}

template <class T>
inline constexpr bool is_16bit_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Integers compute in their own type; floating types in acc_t (f16 and bf16
// widen to float).
template <class T> using math_t = std::conditional_t<std::is_integral_v<T>, T, acc_t<T>>;
template <class T> inline math_t<T> load_math(T v) {
  if constexpr (std::is_integral_v<T>) return v; else return load_acc(v);
}
template <class T> inline T store_math(math_t<T> v) {
  if constexpr (std::is_integral_v<T>) return v; else return store_acc<T>(v);
}

// One element converted between any two element types (16-bit floats go
// through float; anything non-zero becomes true).
template <class To, class From>
inline To convert_element(From v) {
  if constexpr (std::is_same_v<To, From>) return v;
  else if constexpr (is_16bit_float_v<From>) return convert_element<To>(to_float(v));
  else if constexpr (is_16bit_float_v<To>) return from_float<To>(static_cast<float>(v));
  else if constexpr (std::is_same_v<To, bool>) return v != From(0);
  else return static_cast<To>(v);
}

// Runs fn(begin, end) over [0, n): inline when the range is small, so tiny
// tensors pay neither a thread handoff nor the std::function allocation.
template <class Fn>
inline void for_range(Runtime& rt, int64_t n, Fn&& fn) {
  if (n <= cpu::kElementGrain) {
    if (n > 0) fn(int64_t(0), n);
    return;
  }
  rt.thread_pool().parallel_for(n, cpu::kElementGrain, fn);
}

// Calls fn(i, offsets) for every element index i in [begin, end) of `shape`,
// with offsets[k] the element's offset under strides[k] (0 strides broadcast).
template <size_t N, class Fn>
void for_each_offsets(const Shape& shape, const std::array<Shape, N>& strides, int64_t begin, int64_t end,
                      Fn&& fn) {
  std::array<int64_t, N> step{};
  if (shape.rank() > 0)
    for (size_t n = 0; n < N; ++n) step[n] = strides[n][shape.rank() - 1];
  cpu::for_each_runs<N>(shape, strides, begin, end, [&](int64_t i, std::array<int64_t, N> off, int64_t run) {
    for (int64_t k = 0; k < run; ++k) {
      fn(i + k, off);
      for (size_t n = 0; n < N; ++n) off[n] += step[n];
    }
  });
}

// Registration of each file's ops; register_elementwise_ops calls them all.
void register_binary_ops(OpRegistry& r);
void register_compare_ops(OpRegistry& r);
void register_logical_ops(OpRegistry& r);
void register_unary_ops(OpRegistry& r);
void register_where_op(OpRegistry& r);
void register_cast_op(OpRegistry& r);
void register_creation_ops(OpRegistry& r);
void register_random_ops(OpRegistry& r);
void register_dropout_ops(OpRegistry& r);

}  // namespace kiln::elementwise
