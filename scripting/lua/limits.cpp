#include "limits.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace kiln::lua {
namespace {

// VM instructions between two calls of the count hook; the limit is
// enforced to within this many instructions.
constexpr int64_t kHookPeriod = 1000;

Limits* limits_of(lua_State* L) {
  Limits* limits = nullptr;
  std::memcpy(&limits, lua_getextraspace(L), sizeof limits);
  return limits;
}

int hook_period(const Limits* limits) { return int(std::min(kHookPeriod, limits->instruction_limit)); }

// Once over the limit, the hook runs after every instruction and raises
// each time, until the run ends: a script that catches the error with pcall
// gets it back at its very next instruction, at every level, so the error
// reaches the top however many pcalls are in the way.
void count_hook(lua_State* L, lua_Debug*) {
  Limits* limits = limits_of(L);
  limits->instructions_run += lua_gethookcount(L);
  if (limits->instructions_run <= limits->instruction_limit) return;
  lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
  luaL_where(L, 0);
  lua_pushfstring(L, "the script exceeded its limit of %I instructions per run", lua_Integer(limits->instruction_limit));
  lua_concat(L, 2);
  lua_error(L);
}

}  // namespace

void* limited_alloc(void* ud, void* ptr, size_t old_size, size_t new_size) {
  auto* limits = static_cast<Limits*>(ud);
  // For a new block, old_size is a type tag, not a size.
  const size_t held = ptr != nullptr ? old_size : 0;
  if (new_size == 0) {
    std::free(ptr);
    limits->memory_used -= held;
    return nullptr;
  }
  if (limits->memory_limit != 0 && new_size > held && limits->memory_used - held + new_size > limits->memory_limit)
    return nullptr;
  void* block = std::realloc(ptr, new_size);
  if (block != nullptr) limits->memory_used = limits->memory_used - held + new_size;
  return block;
}

void install_instruction_limit(lua_State* L, Limits* limits) {
  std::memcpy(lua_getextraspace(L), &limits, sizeof limits);
  reset_instruction_count(L, limits);
}

void reset_instruction_count(lua_State* L, Limits* limits) {
  limits->instructions_run = 0;
  if (limits->instruction_limit > 0) lua_sethook(L, count_hook, LUA_MASKCOUNT, hook_period(limits));
}

}  // namespace kiln::lua
