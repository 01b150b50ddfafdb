#include "kiln/dtype.hpp"

namespace kiln {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
    case DType::boolean: return "bool";
  }
  return "?";
}

bool parse_dtype(std::string_view name, DType* out) {
  struct Alias { std::string_view name; DType type; };
  static constexpr Alias kAliases[] = {
      {"f32", DType::f32},   {"float32", DType::f32}, {"float", DType::f32},
      {"f64", DType::f64},   {"float64", DType::f64}, {"double", DType::f64},
      {"f16", DType::f16},   {"float16", DType::f16}, {"half", DType::f16},
      {"bf16", DType::bf16}, {"bfloat16", DType::bf16},
      {"i32", DType::i32},   {"int32", DType::i32},
      {"i64", DType::i64},   {"int64", DType::i64}, {"long", DType::i64},
      {"u8", DType::u8},     {"uint8", DType::u8},
      {"bool", DType::boolean},
  };
  for (const Alias& a : kAliases) {
    if (a.name == name) {
      *out = a.type;
      return true;
    }
  }
  return false;
}

// IEEE half conversions with round-to-nearest-even, subnormals, inf and NaN.
float half_to_float(Half v) {
  const uint32_t sign = uint32_t(v.bits & 0x8000u) << 16;
  uint32_t exp = (v.bits >> 10) & 0x1fu;
  uint32_t mant = v.bits & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalise the mantissa
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    bits = sign | (uint32_t(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

Half float_to_half(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) return {uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u))};
  if (abs >= 0x477ff000u) return {uint16_t(sign | 0x7c00u)};  // rounds past 65504: inf
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    const float scaled = std::bit_cast<float>(abs) * 16777216.0f;  // * 2^24
    uint32_t m = uint32_t(scaled);
    const float rem = scaled - float(m);
    if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
    return {uint16_t(sign | m)};
  }
  uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return {uint16_t(sign | ((rounded - 0x38000000u) >> 13))};
}

}  // namespace kiln
