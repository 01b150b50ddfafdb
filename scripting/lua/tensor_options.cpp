#include "tensor_options.hpp"

#include <cstring>

namespace kiln::lua {

TensorOptions read_tensor_options(lua_State* L, int index, kiln_dtype default_dtype, bool allow_requires_grad) {
  TensorOptions options;
  options.dtype = default_dtype;
  if (lua_isnoneornil(L, index)) return options;
  luaL_checktype(L, index, LUA_TTABLE);
  index = lua_absindex(L, index);
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    const char* key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
    if (std::strcmp(key, "dtype") == 0) {
      options.dtype = check_dtype(L, -1);
    } else if (std::strcmp(key, "device") == 0) {
      check_device(L, -1, &options.device, &options.device_index);
    } else if (allow_requires_grad && std::strcmp(key, "requires_grad") == 0) {
      options.requires_grad = lua_toboolean(L, -1);
    } else {
      lua_pushvalue(L, -2);
      raise_message(L, lua_pushfstring(L, "unknown tensor option '%s' (expected dtype, device%s)",
                                       luaL_tolstring(L, -1, nullptr),
                                       allow_requires_grad ? " or requires_grad" : ""));
    }
    lua_pop(L, 1);
  }
  return options;
}

void apply_requires_grad(lua_State* L, kiln_tensor* t, const TensorOptions& options) {
  if (options.requires_grad) check(L, kiln_tensor_set_requires_grad(t, 1));
}

}  // namespace kiln::lua
