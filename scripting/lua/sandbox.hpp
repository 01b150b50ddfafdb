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

// True in a state opened with open_sandbox_environment.
bool sandboxed(lua_State* L);
// In a sandbox, raises "<what>: a sandboxed script cannot read or write
// files": the kiln module's functions that take a path call it, so that
// the sandbox reaches no file through them either.
void refuse_files_in_sandbox(lua_State* L, const char* what);
// In a sandbox, raises unless the data source type reads no files (the
// sources a sandbox may make are an allow-list: a plugin's source may read
// anything).
void check_sandboxed_source(lua_State* L, const char* type);

}  // namespace kiln::lua
