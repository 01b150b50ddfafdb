// The "kiln.Module" kind: layers, containers and ops as modules (nn_module.cpp).
#pragma once

#include "binding.hpp"

namespace kiln::lua {

constexpr const char* kModule = "kiln.Module";

// Takes over the caller's reference on `m`.
inline void push_module(lua_State* L, kiln_module* m) { push_handle(L, m, kModule); }
inline kiln_module* check_module(lua_State* L, int index) {
  return static_cast<kiln_module*>(check_handle(L, index, kModule));
}

// Registers the metatable of kModule with its methods.
void define_module_kind(lua_State* L);

// Most outputs a forward or a build may give back to Lua.
constexpr size_t kMaxOutputs = 32;

}  // namespace kiln::lua
