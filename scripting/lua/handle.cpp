// Handles as full userdata: a box holding one reference, released once by
// __gc or __close (whichever comes first; the box is then empty and every
// later use is an error, never a use after free).
#include "binding.hpp"

namespace kiln::lua {
namespace {

struct HandleBox {
  void* handle;
};

using ReleaseFn = void (*)(void*);

// __gc and __close; the kind's release function is upvalue 1 (a userdata
// holding the function pointer).
int release_box(lua_State* L) {
  auto* box = static_cast<HandleBox*>(lua_touserdata(L, 1));
  auto* release = static_cast<ReleaseFn*>(lua_touserdata(L, lua_upvalueindex(1)));
  if (box != nullptr && box->handle != nullptr) {
    void* handle = box->handle;
    box->handle = nullptr;
    (*release)(handle);
  }
  return 0;
}

}  // namespace

void define_kind(lua_State* L, const char* kind, void (*release)(void*), const luaL_Reg* methods) {
  if (!luaL_newmetatable(L, kind)) {
    lua_pop(L, 1);  // defined already (the module opened twice in one state)
    return;
  }
  auto* release_slot = static_cast<ReleaseFn*>(lua_newuserdatauv(L, sizeof(ReleaseFn), 0));
  *release_slot = release;
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, release_box, 1);
  lua_setfield(L, -3, "__gc");
  lua_pushcclosure(L, release_box, 1);
  lua_setfield(L, -2, "__close");
  lua_newtable(L);
  luaL_setfuncs(L, methods, 0);
  lua_setfield(L, -2, "__index");
  // getmetatable(handle) gives the kind's name, not the table: a script
  // cannot replace __gc and release a handle twice or never.
  lua_pushstring(L, kind);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
}

void push_handle(lua_State* L, void* handle, const char* kind) {
  auto* box = static_cast<HandleBox*>(lua_newuserdatauv(L, sizeof(HandleBox), 0));
  box->handle = handle;
  if (luaL_getmetatable(L, kind) != LUA_TTABLE) {
    lua_pop(L, 1);
    // The box holds the reference now: releasing it is its kind's job, and
    // the kind does not exist. This is a bug of the module, reported as such.
    luaL_error(L, "internal error: the handle kind '%s' was never defined", kind);
  }
  lua_setmetatable(L, -2);
}

void* test_handle(lua_State* L, int index, const char* kind) {
  auto* box = static_cast<HandleBox*>(luaL_testudata(L, index, kind));
  return box != nullptr ? box->handle : nullptr;
}

void* check_handle(lua_State* L, int index, const char* kind) {
  auto* box = static_cast<HandleBox*>(luaL_testudata(L, index, kind));
  if (box == nullptr) luaL_typeerror(L, index, kind);
  if (box->handle == nullptr)
    luaL_argerror(L, index, lua_pushfstring(L, "this %s was closed already and cannot be used", kind));
  return box->handle;
}

}  // namespace kiln::lua
