// dtype and device names as scripts write them.
#include <cstring>
#include <string>

#include "binding.hpp"

namespace kiln::lua {
namespace {

struct DTypeName {
  const char* name;
  kiln_dtype dtype;
};

// The first name of each dtype is how kiln writes it; the others are
// accepted spellings.
constexpr DTypeName kDTypeNames[] = {
    {"f32", KILN_F32},     {"f64", KILN_F64},     {"f16", KILN_F16},     {"bf16", KILN_BF16},
    {"i32", KILN_I32},     {"i64", KILN_I64},     {"u8", KILN_U8},       {"bool", KILN_BOOL},
    {"float32", KILN_F32}, {"float64", KILN_F64}, {"float16", KILN_F16}, {"bfloat16", KILN_BF16},
    {"int32", KILN_I32},   {"int64", KILN_I64},   {"uint8", KILN_U8},    {"float", KILN_F32},
    {"double", KILN_F64},  {"half", KILN_F16},    {"int", KILN_I32},     {"long", KILN_I64},
};

}  // namespace

const char* dtype_name(kiln_dtype dtype) {
  for (const DTypeName& entry : kDTypeNames)
    if (entry.dtype == dtype) return entry.name;
  return "unknown dtype";
}

kiln_dtype check_dtype(lua_State* L, int index) {
  const char* name = luaL_checkstring(L, index);
  for (const DTypeName& entry : kDTypeNames)
    if (std::strcmp(entry.name, name) == 0) return entry.dtype;
  return static_cast<kiln_dtype>(luaL_argerror(
      L, index,
      lua_pushfstring(L, "unknown dtype '%s' (expected f32, f64, f16, bf16, i32, i64, u8 or bool)", name)));
}

void check_device(lua_State* L, int index, kiln_device_type* type, int* device_index) {
  const char* name = luaL_checkstring(L, index);
  if (std::strcmp(name, "cpu") == 0) {
    *type = KILN_DEVICE_CPU;
    *device_index = 0;
    return;
  }
  if (std::strncmp(name, "cuda", 4) == 0) {
    const char* rest = name + 4;
    if (*rest == '\0') {
      *type = KILN_DEVICE_CUDA;
      *device_index = 0;
      return;
    }
    if (*rest == ':' && rest[1] != '\0' && std::strspn(rest + 1, "0123456789") == std::strlen(rest + 1) &&
        std::strlen(rest + 1) < 6) {
      *type = KILN_DEVICE_CUDA;
      *device_index = std::stoi(rest + 1);
      return;
    }
  }
  luaL_argerror(L, index, lua_pushfstring(L, "unknown device '%s' (expected \"cpu\", \"cuda\" or \"cuda:N\")", name));
}

}  // namespace kiln::lua
