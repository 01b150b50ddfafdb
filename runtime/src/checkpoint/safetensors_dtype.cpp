#include "safetensors_dtype.hpp"

#include "kiln/checkpoint/safetensors.hpp"

namespace kiln::checkpoint {

const char* safetensors_dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "F32";
    case DType::f64: return "F64";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
    case DType::i32: return "I32";
    case DType::i64: return "I64";
    case DType::u8: return "U8";
    case DType::boolean: return "BOOL";
  }
  return "?";
}

DTypeLookup lookup_safetensors_dtype(std::string_view name, DType* out) {
  for (DType t : kAllDTypes) {
    if (name == safetensors_dtype_name(t)) {
      *out = t;
      return DTypeLookup::found;
    }
  }
  // The format's other dtypes: named so that a file using them is refused
  // as "not supported" rather than as corrupt.
  static constexpr std::string_view kOtherFormatDTypes[] = {
      "I8", "I16", "U16", "U32", "U64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2", "C64",
  };
  for (std::string_view other : kOtherFormatDTypes) {
    if (name == other) return DTypeLookup::unsupported;
  }
  return DTypeLookup::unknown;
}

}  // namespace kiln::checkpoint
