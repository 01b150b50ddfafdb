// The kiln module table: every part's functions, and the few that belong
// to none: kiln.no_grad, kiln.autocast, kiln.manual_seed, kiln.devices,
// kiln.version.
#include "module.hpp"

namespace kiln::lua {
namespace {

// kiln.no_grad(fn, ...): calls fn(...) with gradient recording off and
// returns what it returns; recording is restored even when fn raises.
int no_grad(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  kiln_runtime* rt = runtime(L);
  check(L, kiln_no_grad_begin(rt));
  struct Restore {
    kiln_runtime* rt;
    ~Restore() { kiln_no_grad_end(rt); }
  } restore{rt};
  // Lua is compiled as C++: an error in fn unwinds through here and runs
  // Restore's destructor, without a protected call that would hide the
  // error's traceback.
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// kiln.autocast(dtype, fn, ...): calls fn(...) with mixed precision in
// dtype ("bf16" or "f16"; see kiln_autocast_begin) and returns what it
// returns; the scope closes even when fn raises.
int autocast(lua_State* L) {
  const kiln_dtype dtype = check_dtype(L, 1);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  kiln_runtime* rt = runtime(L);
  check(L, kiln_autocast_begin(rt, dtype));
  struct Restore {
    kiln_runtime* rt;
    ~Restore() { kiln_autocast_end(rt); }
  } restore{rt};
  lua_remove(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

int manual_seed(lua_State* L) {
  const lua_Integer seed = luaL_checkinteger(L, 1);
  check(L, kiln_manual_seed(runtime(L), uint64_t(seed)));
  return 0;
}

// {cpu = true, cuda = <count>, cuda_unavailable = <why, when count is 0>}
int devices(lua_State* L) {
  int cuda_count = 0;
  const char* reason = nullptr;
  check(L, kiln_devices_get(runtime(L), &cuda_count, &reason));
  lua_createtable(L, 0, 3);
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, "cpu");
  lua_pushinteger(L, cuda_count);
  lua_setfield(L, -2, "cuda");
  if (cuda_count == 0 && reason != nullptr && reason[0] != '\0') {
    lua_pushstring(L, reason);
    lua_setfield(L, -2, "cuda_unavailable");
  }
  return 1;
}

}  // namespace

int open_module(lua_State* L) {
  lua_newtable(L);
  const luaL_Reg functions[] = {
      {"no_grad", guarded<no_grad>},
      {"autocast", guarded<autocast>},
      {"manual_seed", guarded<manual_seed>},
      {"devices", guarded<devices>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, functions, 0);
  lua_pushstring(L, kiln_version());
  lua_setfield(L, -2, "version");
  open_tensor(L);
  open_functional(L);
  open_op_listing(L);
  open_nn(L);
  open_optim(L);
  open_data(L);
  open_train(L);
  open_checkpoint(L);
  open_dist(L);
  open_profile(L);
  open_memory(L);
  return 1;
}

}  // namespace kiln::lua
