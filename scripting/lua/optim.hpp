// The kinds of kiln.optim (optim.cpp), for the other parts that take them.
#pragma once

#include "binding.hpp"

namespace kiln::lua {

constexpr const char* kOptimizer = "kiln.Optimizer";
constexpr const char* kSchedule = "kiln.Schedule";

inline kiln_optimizer* check_optimizer(lua_State* L, int index) {
  return static_cast<kiln_optimizer*>(check_handle(L, index, kOptimizer));
}
inline kiln_lr_schedule* check_schedule(lua_State* L, int index) {
  return static_cast<kiln_lr_schedule*>(check_handle(L, index, kSchedule));
}

}  // namespace kiln::lua
