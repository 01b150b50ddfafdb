#include "state.hpp"

#include <new>

namespace kiln::lua {
namespace {

// The address is the registry key of the state's StateData userdata.
const char kStateKey = 0;

int state_data_gc(lua_State* L) {
  auto* data = static_cast<StateData*>(lua_touserdata(L, 1));
  kiln_runtime_release(data->rt);
  data->~StateData();
  return 0;
}

// The first frame that runs Lua code: a bound function called from another
// bound function (a callback of kiln.fit, a metamethod) still reports the
// script's line.
void push_where(lua_State* L) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); ++level) {
    lua_getinfo(L, "Sl", &ar);
    if (ar.currentline > 0) {
      lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
      return;
    }
  }
  lua_pushliteral(L, "");
}

}  // namespace

void attach_runtime(lua_State* L, kiln_runtime* rt) {
  void* memory = lua_newuserdatauv(L, sizeof(StateData), 0);
  auto* data = new (memory) StateData;
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, state_data_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  kiln_runtime_retain(rt);
  data->rt = rt;
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kStateKey);
}

StateData* find_state_data(lua_State* L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kStateKey);
  auto* data = static_cast<StateData*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return data;
}

StateData& state_data(lua_State* L) {
  StateData* data = find_state_data(L);
  if (data == nullptr) luaL_error(L, "this Lua state has no kiln runtime (the kiln module was opened outside kiln_script_create)");
  return *data;
}

kiln_runtime* runtime(lua_State* L) { return state_data(L).rt; }

void raise_message(lua_State* L, const char* message) {
  push_where(L);
  lua_pushstring(L, message);
  lua_concat(L, 2);
  lua_error(L);
  __builtin_unreachable();
}

void raise_status(lua_State* L, kiln_status status) {
  StateData& data = state_data(L);
  // kiln_last_error() changes with the next failing call: copy it first.
  const std::string message = kiln_last_error();
  push_where(L);
  lua_pushstring(L, message.c_str());
  lua_concat(L, 2);
  data.raised_message = lua_tostring(L, -1);
  data.raised_status = status;
  lua_error(L);
  __builtin_unreachable();
}

void raise_last_error(lua_State* L) { raise_status(L, KILN_ERR_SCRIPT); }

}  // namespace kiln::lua
