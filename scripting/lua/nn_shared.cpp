#include "nn_shared.hpp"

#include <algorithm>
#include <cstring>

namespace kiln::lua {

void push_subtable(lua_State* L, int kiln_index, const char* name) {
  kiln_index = lua_absindex(L, kiln_index);
  if (lua_getfield(L, kiln_index, name) == LUA_TTABLE) return;
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushvalue(L, -1);
  lua_setfield(L, kiln_index, name);
}

void set_metamethods(lua_State* L, const char* kind, const luaL_Reg* metamethods) {
  luaL_getmetatable(L, kind);
  luaL_setfuncs(L, metamethods, 0);
  lua_pop(L, 1);
}

bool is_registered(kiln_runtime* rt, kiln_registration_kind kind, const char* name) {
  size_t n_plugins = 0;
  if (kiln_plugin_count(rt, &n_plugins) != KILN_OK) return false;
  for (size_t p = 0; p < n_plugins; ++p) {
    kiln_plugin_info info{};
    info.size = sizeof info;
    if (kiln_plugin_info_get(rt, p, &info) != KILN_OK) continue;
    for (size_t r = 0; r < info.num_registrations; ++r) {
      kiln_registration_kind k{};
      const char* registered = nullptr;
      if (kiln_plugin_registration(rt, p, r, &k, &registered) == KILN_OK && k == kind &&
          std::strcmp(registered, name) == 0)
        return true;
    }
  }
  return false;
}

namespace {

// __index(table, key) of a table of registered constructors. The kind is
// upvalue 1, the constructor upvalue 2. Found constructors are not cached
// in the table: a plugin may be unloaded later, and the runtime's own
// message then says so.
int index_registered(lua_State* L) {
  const char* name = lua_tostring(L, 2);
  if (lua_type(L, 2) != LUA_TSTRING ||
      !is_registered(runtime(L), kiln_registration_kind(lua_tointeger(L, lua_upvalueindex(1))), name)) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_pushcclosure(L, lua_tocfunction(L, lua_upvalueindex(2)), 1);
  return 1;
}

}  // namespace

void set_registered_constructors(lua_State* L, kiln_registration_kind kind, lua_CFunction make) {
  lua_newtable(L);
  lua_pushinteger(L, kind);
  lua_pushcfunction(L, make);
  lua_pushcclosure(L, index_registered, 2);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
}

std::vector<kiln_tensor*> check_tensor_array(lua_State* L, int index, const char* what) {
  index = lua_absindex(L, index);
  if (!lua_istable(L, index))
    luaL_error(L, "%s: expected an array of tensors, got a %s", what, luaL_typename(L, index));
  std::vector<kiln_tensor*> tensors;
  const lua_Integer n = luaL_len(L, index);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_geti(L, index, i);
    kiln_tensor* t = static_cast<kiln_tensor*>(test_handle(L, -1, kTensor));
    if (!t) luaL_error(L, "%s: entry %d is a %s; expected a tensor", what, int(i), luaL_typename(L, -1));
    lua_pop(L, 1);
    tensors.push_back(t);
  }
  return tensors;
}

std::vector<std::string> check_string_array(lua_State* L, int index, const char* what) {
  index = lua_absindex(L, index);
  if (!lua_istable(L, index))
    luaL_error(L, "%s: expected an array of strings, got a %s", what, luaL_typename(L, index));
  std::vector<std::string> strings;
  const lua_Integer n = luaL_len(L, index);
  for (lua_Integer i = 1; i <= n; ++i) {
    if (lua_geti(L, index, i) != LUA_TSTRING)
      luaL_error(L, "%s: entry %d is a %s; expected a string", what, int(i), luaL_typename(L, -1));
    strings.emplace_back(lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  return strings;
}

namespace {

// Pushes options[field]; false (and nothing pushed) when there is no
// options table or no such field.
bool push_field(lua_State* L, int index, const char* field) {
  if (lua_isnoneornil(L, index)) return false;
  if (lua_getfield(L, index, field) != LUA_TNIL) return true;
  lua_pop(L, 1);
  return false;
}

// Raises (never returns) about the field's value on top of the stack.
void raise_field_type(lua_State* L, const char* field, const char* expected) {
  luaL_error(L, "option '%s' must be %s, got a %s", field, expected, luaL_typename(L, -1));
}

}  // namespace

lua_Integer opt_integer_field(lua_State* L, int index, const char* field, lua_Integer fallback) {
  if (!push_field(L, index, field)) return fallback;
  int is_integer = 0;
  const lua_Integer value = lua_tointegerx(L, -1, &is_integer);
  if (!is_integer) raise_field_type(L, field, "an integer");
  lua_pop(L, 1);
  return value;
}

lua_Number opt_number_field(lua_State* L, int index, const char* field, lua_Number fallback) {
  if (!push_field(L, index, field)) return fallback;
  if (lua_type(L, -1) != LUA_TNUMBER) raise_field_type(L, field, "a number");
  const lua_Number value = lua_tonumber(L, -1);
  lua_pop(L, 1);
  return value;
}

bool opt_boolean_field(lua_State* L, int index, const char* field, bool fallback) {
  if (!push_field(L, index, field)) return fallback;
  if (!lua_isboolean(L, -1)) raise_field_type(L, field, "a boolean");
  const bool value = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return value;
}

std::string opt_string_field(lua_State* L, int index, const char* field) {
  if (!push_field(L, index, field)) return {};
  if (lua_type(L, -1) != LUA_TSTRING) raise_field_type(L, field, "a string");
  std::string value = lua_tostring(L, -1);
  lua_pop(L, 1);
  return value;
}

void check_known_fields(lua_State* L, int index, const char* what, const std::vector<std::string>& known) {
  if (lua_isnoneornil(L, index)) return;
  index = lua_absindex(L, index);
  lua_pushnil(L);
  while (lua_next(L, index)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) continue;
    const char* key = lua_tostring(L, -1);
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    luaL_error(L, "%s: unknown option '%s'; expected one of: %s", what, key, list.c_str());
  }
}

}  // namespace kiln::lua
