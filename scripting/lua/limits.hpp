// The memory and instruction limits of a script's Lua state.
#pragma once

#include <cstddef>
#include <cstdint>

#include "binding.hpp"

namespace kiln::lua {

struct Limits {
  size_t memory_limit = 0;  // bytes; 0: none
  size_t memory_used = 0;
  int64_t instruction_limit = 0;  // per run; 0: none
  int64_t instructions_run = 0;   // in the current run, counted per hook call
};

// A lua_Alloc (ud: a Limits) that refuses to grow beyond memory_limit:
// Lua then raises its memory error, and the state stays usable.
void* limited_alloc(void* ud, void* ptr, size_t old_size, size_t new_size);

// Installs the instruction count hook when there is a limit. The hook finds
// the limits through the state's extra space (lua_getextraspace), which
// must hold a Limits*; coroutines inherit both.
void install_instruction_limit(lua_State* L, Limits* limits);

// Starts the count of a new run (on the main thread, where runs start).
void reset_instruction_count(lua_State* L, Limits* limits);

}  // namespace kiln::lua
