#include "sandbox.hpp"

#include <cstring>

#include "module.hpp"

namespace kiln::lua {
namespace {

// Base functions a sandboxed script keeps. Everything not named here is
// left out, including what later Lua versions add.
constexpr const char* kBaseAllowList[] = {
    "assert", "error",    "getmetatable", "ipairs", "next",         "pairs",    "pcall",   "print",
    "rawequal", "rawget", "rawlen",       "rawset", "select",       "setmetatable", "tonumber", "tostring",
    "type",   "xpcall",   "_VERSION",
};
// Libraries copied whole (a copy: changing it does not change the original).
constexpr const char* kLibraryAllowList[] = {"table", "math", "utf8", "coroutine"};
// collectgarbage options that only look or collect.
constexpr const char* kCollectOptions[] = {"collect", "count", "step", "isrunning"};
// Data sources that make their examples from their options alone.
constexpr const char* kSourceAllowList[] = {"tensors", "synthetic"};
// The registry field that marks a sandboxed state.
constexpr const char* kSandboxedKey = "kiln.sandboxed";

// load(chunk, name, mode, env) with mode forced to text: a binary chunk
// can break the VM's invariants. The original load is upvalue 1.
int text_only_load(lua_State* L) {
  const char* mode = luaL_optstring(L, 3, "t");
  if (std::strcmp(mode, "t") != 0)
    return luaL_error(L, "load: only text chunks can be loaded in a sandbox (mode \"t\"), not mode \"%s\"", mode);
  const bool with_env = lua_gettop(L) >= 4;  // an explicit nil env is not the default env
  lua_settop(L, 4);
  const int n_args = 4;
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_pushliteral(L, "t");
  int n_pushed = 3;
  if (with_env) {
    lua_pushvalue(L, 4);
    ++n_pushed;
  }
  lua_call(L, n_pushed, LUA_MULTRET);
  return lua_gettop(L) - n_args;
}

// collectgarbage(option, ...) for the options in kCollectOptions; the
// original collectgarbage is upvalue 1.
int limited_collectgarbage(lua_State* L) {
  const char* option = luaL_optstring(L, 1, "collect");
  bool allowed = false;
  for (const char* name : kCollectOptions) allowed = allowed || std::strcmp(name, option) == 0;
  if (!allowed)
    return luaL_error(L, "collectgarbage: option \"%s\" is not available in a sandbox (collect, count, step "
                         "and isrunning are)", option);
  const int n_args = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, n_args, LUA_MULTRET);
  return lua_gettop(L);
}

int kiln_only_require(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  if (std::strcmp(name, "kiln") != 0)
    return luaL_error(L, "require: only the kiln module is available in a sandbox (asked for '%s')", name);
  luaL_requiref(L, "kiln", open_module, 0);
  return 1;
}

// env[name] = a shallow copy of the table globals[name] (globals at index
// -2, env on top), leaving out `except` when given.
void copy_library(lua_State* L, const char* name, const char* except) {
  lua_getfield(L, -2, name);
  lua_newtable(L);
  lua_pushnil(L);
  while (lua_next(L, -3) != 0) {
    const bool skip = except != nullptr && lua_type(L, -2) == LUA_TSTRING && std::strcmp(lua_tostring(L, -2), except) == 0;
    if (skip) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
  lua_remove(L, -2);
  lua_setfield(L, -2, name);
}

// env[name] = a closure of `fn` over globals[name].
void wrap_base_function(lua_State* L, const char* name, lua_CFunction fn) {
  lua_getfield(L, -2, name);
  lua_pushcclosure(L, fn, 1);
  lua_setfield(L, -2, name);
}

}  // namespace

void open_trusted_environment(lua_State* L) {
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, open_module);
  lua_setfield(L, -2, "kiln");
  lua_pop(L, 2);
}

void open_sandbox_environment(lua_State* L) {
  luaL_openlibs(L);
  lua_pushglobaltable(L);
  lua_newtable(L);
  for (const char* name : kBaseAllowList) {
    lua_getfield(L, -2, name);
    lua_setfield(L, -2, name);
  }
  for (const char* name : kLibraryAllowList) copy_library(L, name, nullptr);
  copy_library(L, "string", "dump");
  wrap_base_function(L, "load", text_only_load);
  wrap_base_function(L, "collectgarbage", limited_collectgarbage);
  lua_pushcfunction(L, kiln_only_require);
  lua_setfield(L, -2, "require");
  lua_pushvalue(L, -1);
  lua_setfield(L, -2, "_G");
  // String methods ("x"):rep(3) come from the string metatable's __index:
  // point it at the copy, which has no dump.
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  lua_getfield(L, -3, "string");
  lua_setfield(L, -2, "__index");
  lua_pop(L, 2);
  lua_pushboolean(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, kSandboxedKey);
  // From now on chunks see only the new table as their globals.
  lua_rawseti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  lua_pop(L, 1);
}

bool sandboxed(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kSandboxedKey);
  const bool marked = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return marked;
}

void refuse_files_in_sandbox(lua_State* L, const char* what) {
  if (sandboxed(L)) luaL_error(L, "%s: a sandboxed script cannot read or write files", what);
}

void check_sandboxed_source(lua_State* L, const char* type) {
  if (!sandboxed(L)) return;
  for (const char* name : kSourceAllowList)
    if (std::strcmp(name, type) == 0) return;
  luaL_error(L, "kiln.data.source: source '%s' is not available in a sandbox, where sources may not read files "
                "(available: tensors, synthetic)", type);
}

}  // namespace kiln::lua
