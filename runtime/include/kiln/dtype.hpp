// Element types. The numeric values are the C API's kiln_dtype values.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace kiln {

enum class DType : uint8_t { f32 = 0, f64 = 1, f16 = 2, bf16 = 3, i32 = 4, i64 = 5, u8 = 6, boolean = 7 };
inline constexpr int kNumDTypes = 8;
inline constexpr std::array<DType, kNumDTypes> kAllDTypes = {DType::f32, DType::f64, DType::f16, DType::bf16,
                                                             DType::i32, DType::i64, DType::u8,  DType::boolean};

constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::f64: case DType::i64: return 8;
    case DType::f32: case DType::i32: return 4;
    case DType::f16: case DType::bf16: return 2;
    case DType::u8: case DType::boolean: return 1;
  }
  return 0;
}

constexpr bool is_floating(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::f16 || t == DType::bf16;
}

const char* dtype_name(DType t);
inline std::string to_string(DType t) { return dtype_name(t); }
// Parses "f32", "float32", "bool", ...; returns false for an unknown name.
bool parse_dtype(std::string_view name, DType* out);

// 16-bit floats are stored as raw bits and converted to float for arithmetic.
struct Half { uint16_t bits; };
struct BFloat16 { uint16_t bits; };

inline float bf16_to_float(BFloat16 v) { return std::bit_cast<float>(uint32_t(v.bits) << 16); }
inline BFloat16 float_to_bf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return {uint16_t((u >> 16) | 0x40)};  // keep NaN a NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return {uint16_t(u >> 16)};
}
float half_to_float(Half v);
Half float_to_half(float f);

// Maps a C++ element type to its DType.
template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<Half> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<BFloat16> { static constexpr DType value = DType::bf16; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::i64; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::u8; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::boolean; };

// Converts any element type to and from double/float for generic kernels.
template <class T> inline float to_float(T v) { return static_cast<float>(v); }
template <> inline float to_float(Half v) { return half_to_float(v); }
template <> inline float to_float(BFloat16 v) { return bf16_to_float(v); }
template <class T> inline T from_float(float v) { return static_cast<T>(v); }
template <> inline Half from_float(float v) { return float_to_half(v); }
template <> inline BFloat16 from_float(float v) { return float_to_bf16(v); }
template <> inline bool from_float(float v) { return v != 0.0f; }

// Floating-point kernels accumulate in acc_t: double for f64, float for the
// other floating types (f16 and bf16 are widened on load, narrowed on store).
template <class T> using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;
template <class T> inline acc_t<T> load_acc(T v) {
  if constexpr (std::is_same_v<T, double>) return v; else return to_float(v);
}
template <class T> inline T store_acc(acc_t<T> v) {
  if constexpr (std::is_same_v<T, double>) return v; else return from_float<T>(v);
}

// Calls fn.template operator()<T>() with T the C++ type of `t`.
template <class Fn>
decltype(auto) visit_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::f32: return fn.template operator()<float>();
    case DType::f64: return fn.template operator()<double>();
    case DType::f16: return fn.template operator()<Half>();
    case DType::bf16: return fn.template operator()<BFloat16>();
    case DType::i32: return fn.template operator()<int32_t>();
    case DType::i64: return fn.template operator()<int64_t>();
    case DType::u8: return fn.template operator()<uint8_t>();
    case DType::boolean: return fn.template operator()<bool>();
  }
  return fn.template operator()<float>();
}

}  // namespace kiln
