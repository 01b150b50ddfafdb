// The environments scripts run in.
#pragma once

#include "binding.hpp"

namespace kiln::lua {

// Opens Lua's standard libraries and makes require("kiln") load the module.
void open_trusted_environment(lua_State* L);

// Replaces the globals by a table built from an allow-list: the base
// functions that cannot reach files or the VM's internals, string without
// dump, table, math, utf8, coroutine, a load() of text chunks only, a
// collectgarbage() that cannot reconfigure the collector, and a require
// that gives the kiln module and nothing else. No os, io, debug, package,
// dofile or loadfile. Raises (in protected mode) on failure.
void open_sandbox_environment(lua_State* L);

}  // namespace kiln::lua
