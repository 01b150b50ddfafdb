// Element types inside kiln's CUDA kernels: the arithmetic type of each
// element type (f16 and bf16 widen to float, so they accumulate in f32;
// integers compute in their own type), conversions that give the CPU's bits
// exactly (round to nearest even, the CPU's NaN patterns), and the
// registration of one kernel per listed element type.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "kiln/dtype.hpp"
#include "kiln/ops/registry.hpp"

namespace kiln::cuda {

template <class T>
inline constexpr bool is_16bit_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// What a kernel computes an element of type T in.
template <class T> using math_t = std::conditional_t<std::is_integral_v<T>, T, acc_t<T>>;
// What the ordering kernels (arg-reductions, sort) compare an element as:
// integers widen to int64 (warp shuffles take no 8-bit values), floats go
// to their arithmetic type.
template <class T> using order_key_t = std::conditional_t<std::is_integral_v<T>, int64_t, acc_t<T>>;

__device__ inline float half_bits_to_float(uint16_t bits) { return __half2float(__ushort_as_half(bits)); }

__device__ inline uint16_t float_to_half_bits(float f) {
  const uint32_t u = __float_as_uint(f);
  // The CPU keeps the sign of a NaN and sets the quiet bit; the intrinsic
  // returns one canonical NaN.
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t(((u >> 16) & 0x8000u) | 0x7e00u);
  return __half_as_ushort(__float2half_rn(f));
}

// The CPU's float_to_bf16, bit for bit.
__device__ inline uint16_t float_to_bf16_bits(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

template <class T>
__device__ inline math_t<T> to_math(T v) {
  if constexpr (std::is_same_v<T, Half>) return half_bits_to_float(v.bits);
  else if constexpr (std::is_same_v<T, BFloat16>) return __uint_as_float(uint32_t(v.bits) << 16);
  else if constexpr (std::is_integral_v<T>) return v;
  else return acc_t<T>(v);
}

template <class T>
__device__ inline T from_math(math_t<T> v) {
  if constexpr (std::is_same_v<T, Half>) return Half{float_to_half_bits(v)};
  else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16{float_to_bf16_bits(v)};
  else return v;
}

// One element converted between any two element types, as the CPU's
// convert_element: 16-bit floats go through float, anything non-zero is true.
template <class To, class From>
__device__ inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) return v;
  else if constexpr (is_16bit_float_v<From>) return convert<To>(to_math(v));
  else if constexpr (is_16bit_float_v<To>) return from_math<To>(static_cast<float>(v));
  else if constexpr (std::is_same_v<To, bool>) return v != From(0);
  else return static_cast<To>(v);
}

// +infinity in float or double (std::numeric_limits is host-only here).
template <class A>
__device__ inline A infinity() {
  if constexpr (std::is_same_v<A, double>) return __longlong_as_double(0x7ff0000000000000LL);
  else return __int_as_float(0x7f800000);
}

template <class... T> struct TypeList {};
using FloatTypes = TypeList<float, double, Half, BFloat16>;
using ArithmeticTypes = TypeList<float, double, Half, BFloat16, int32_t, int64_t>;
using NumericTypes = TypeList<float, double, Half, BFloat16, int32_t, int64_t, uint8_t>;
using AllTypes = TypeList<float, double, Half, BFloat16, int32_t, int64_t, uint8_t, bool>;

// Sets the CUDA kernel of `op` for each listed T to Family::kernel<T>, a
// static member function template; only the listed types are instantiated.
template <class Family, class... T>
void set_kernels(OpRegistry& r, std::string_view op, TypeList<T...>) {
  (r.set_kernel(op, DeviceType::cuda, dtype_of<T>::value, &Family::template kernel<T>), ...);
}

}  // namespace kiln::cuda
