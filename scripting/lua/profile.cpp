// kiln.profile and kiln.write_trace: the per-op profiler (see
// kiln_profiler_begin).
//
//   local report, loss = kiln.profile(function() return step(x, y) end)
//   print(report)                      -- the table: op, phase, calls, total ms, self ms, mean µs, % total
//   kiln.write_trace("step.json")      -- that profile for Perfetto or chrome://tracing
#include <string>

#include "binding.hpp"
#include "sandbox.hpp"

namespace kiln::lua {
namespace {

// kiln.profile(fn, ...): calls fn(...) with profiling on and returns the
// report table (a string) followed by what fn returns. Profiling ends
// even when fn raises; the error then goes on.
int profile(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  kiln_runtime* rt = runtime(L);
  check(L, kiln_profiler_begin(rt));
  {
    struct End {
      kiln_runtime* rt;
      ~End() { kiln_profiler_end(rt); }
    } end{rt};
    // Lua is compiled as C++: an error in fn unwinds through here and runs
    // End's destructor.
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  }
  size_t length = 0;
  check(L, kiln_profiler_report(rt, nullptr, 0, &length));
  std::string table(length, '\0');
  check(L, kiln_profiler_report(rt, table.data(), length + 1, nullptr));
  lua_pushlstring(L, table.data(), table.size());
  lua_insert(L, 1);
  return lua_gettop(L);
}

// kiln.write_trace(path): the last profile as Chrome trace JSON.
int write_trace(lua_State* L) {
  refuse_files_in_sandbox(L, "kiln.write_trace");
  check(L, kiln_profiler_write_trace(runtime(L), luaL_checkstring(L, 1)));
  return 0;
}

constexpr luaL_Reg kFunctions[] = {
    {"profile", guarded<profile>},
    {"write_trace", guarded<write_trace>},
    {nullptr, nullptr},
};

}  // namespace

void open_profile(lua_State* L) { luaL_setfuncs(L, kFunctions, 0); }

}  // namespace kiln::lua
