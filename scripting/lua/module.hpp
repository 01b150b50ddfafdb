// The kiln Lua module as a whole.
#pragma once

#include "binding.hpp"

namespace kiln::lua {

// lua_CFunction for package.preload.kiln / require("kiln"): builds the
// module table from every part (open_tensor, open_nn, ...) and returns it.
// The state must have been bound to a runtime (attach_runtime) first.
int open_module(lua_State* L);

}  // namespace kiln::lua
