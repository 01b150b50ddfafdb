// The scripting C API (kiln_script.h): a Lua state with the kiln module,
// its limits and its environment, and runs whose errors come back as a
// kiln_status and kiln_last_error() with file:line and a traceback.
#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "kiln/kiln_script.h"
#include "limits.hpp"
#include "sandbox.hpp"
#include "state.hpp"

struct kiln_script {
  kiln::lua::Limits limits;  // the allocator's user data: must not move
  lua_State* L = nullptr;
};

namespace {

using kiln::lua::Limits;

// The message handler of every run: the error with a traceback. A runtime
// error that reached the top unchanged keeps the runtime's status.
int message_handler(lua_State* L) {
  const char* message = lua_tostring(L, 1);
  kiln::lua::StateData& data = kiln::lua::state_data(L);
  data.uncaught_status = message != nullptr && data.raised_status != KILN_OK && data.raised_message == message
                             ? data.raised_status
                             : KILN_ERR_SCRIPT;
  if (message == nullptr) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
      message = lua_tostring(L, -1);
    else
      message = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, message, 1);
  return 1;
}

// Turns a failed protected call's status and message (on top) into the
// thread's kiln error, and pops the message. `what` ("" for none) goes in
// front: a script's own errors begin with their file:line.
kiln_status report(kiln_script* script, int lua_status, const char* what) {
  lua_State* L = script->L;
  const char* message = lua_tostring(L, -1);
  std::string text = message != nullptr ? message : "(no error message)";
  kiln_status status = KILN_ERR_SCRIPT;
  if (lua_status == LUA_ERRMEM) {
    text += " (the Lua state's memory limit is " + std::to_string(script->limits.memory_limit) + " bytes)";
    status = KILN_ERR_OUT_OF_MEMORY;
  } else if (lua_status == LUA_ERRFILE) {
    status = KILN_ERR_IO;
  } else if (const kiln::lua::StateData* data = kiln::lua::find_state_data(L); lua_status == LUA_ERRRUN && data) {
    status = data->uncaught_status;
  }
  lua_pop(L, 1);
  // What a failed run left behind goes now, so the next run has the memory.
  lua_gc(L, LUA_GCCOLLECT);
  return kiln_error_set(status, (what[0] != '\0' ? std::string(what) + ": " + text : text).c_str());
}

// Calls the function below the `n_args` arguments on top with the message
// handler; the run's instruction count starts at zero.
kiln_status run_loaded(kiln_script* script, int n_args) {
  lua_State* L = script->L;
  const int function_index = lua_gettop(L) - n_args;
  lua_pushcfunction(L, message_handler);
  lua_insert(L, function_index);
  kiln::lua::reset_instruction_count(L, &script->limits);
  const int status = lua_pcall(L, n_args, 0, function_index);
  lua_remove(L, function_index);
  if (status != LUA_OK) return report(script, status, "");
  return KILN_OK;
}

struct SetupArgs {
  kiln_runtime* rt;
  bool sandbox;
  bool report;
};

// Runs protected: every step may raise a memory error.
int setup_state(lua_State* L) {
  const auto* args = static_cast<const SetupArgs*>(lua_touserdata(L, 1));
  kiln::lua::attach_runtime(L, args->rt);
  kiln::lua::state_data(L).report_every_fit = args->report;
  if (args->sandbox) kiln::lua::open_sandbox_environment(L);
  else kiln::lua::open_trusted_environment(L);
  return 0;
}

struct ScriptArgs {
  const char* path;
  const char* const* args;
  size_t n;
};

// Sets the global arg = {[0] = path, args...} and pushes the args as the
// chunk's `...` (the ScriptArgs is argument 1).
int push_script_args(lua_State* L) {
  const auto* t = static_cast<const ScriptArgs*>(lua_touserdata(L, 1));
  lua_createtable(L, int(t->n), 1);
  lua_pushstring(L, t->path);
  lua_rawseti(L, -2, 0);
  for (size_t i = 0; i < t->n; ++i) {
    lua_pushstring(L, t->args[i]);
    lua_rawseti(L, -2, lua_Integer(i + 1));
  }
  lua_setglobal(L, "arg");
  for (size_t i = 0; i < t->n; ++i) lua_pushstring(L, t->args[i]);
  return int(t->n);
}

// The fields of `options` that the caller's header version had.
kiln_script_options read_options(const kiln_script_options* options) {
  kiln_script_options read = {};
  read.size = sizeof read;
  if (options != nullptr) std::memcpy(&read, options, std::min(options->size, sizeof read));
  return read;
}

}  // namespace

extern "C" {

kiln_status kiln_script_create(kiln_runtime* rt, const kiln_script_options* options, kiln_script** out) {
  if (rt == nullptr || out == nullptr)
    return kiln_error_set(KILN_ERR_INVALID_ARGUMENT, "kiln_script_create: 'rt' and 'out' must not be NULL");
  if (options != nullptr && options->size < sizeof(size_t))
    return kiln_error_set(KILN_ERR_INVALID_ARGUMENT,
                          "kiln_script_create: options->size is 0; set it to sizeof(kiln_script_options)");
  const kiln_script_options o = read_options(options);
  if (o.instruction_limit < 0)
    return kiln_error_set(KILN_ERR_INVALID_ARGUMENT,
                          "kiln_script_create: instruction_limit must be >= 0 (0: no limit)");
  auto* script = new (std::nothrow) kiln_script;
  if (script == nullptr) return kiln_error_set(KILN_ERR_OUT_OF_MEMORY, "kiln_script_create: out of memory");
  script->limits.memory_limit = o.memory_limit;
  script->limits.instruction_limit = o.instruction_limit;
  script->L = lua_newstate(kiln::lua::limited_alloc, &script->limits);
  if (script->L == nullptr) {
    delete script;
    return kiln_error_set(KILN_ERR_OUT_OF_MEMORY,
                          "kiln_script_create: cannot create a Lua state (out of memory, or memory_limit too small)");
  }
  kiln::lua::install_instruction_limit(script->L, &script->limits);
  SetupArgs args{rt, o.sandbox != 0, o.report != 0};
  lua_pushcfunction(script->L, setup_state);
  lua_pushlightuserdata(script->L, &args);
  const int status = lua_pcall(script->L, 1, 0, 0);
  if (status != LUA_OK) {
    const kiln_status failed = report(script, status, "kiln_script_create");
    kiln_script_release(script);
    return failed;
  }
  *out = script;
  return KILN_OK;
}

void kiln_script_release(kiln_script* script) {
  if (script == nullptr) return;
  lua_close(script->L);
  delete script;
}

kiln_status kiln_script_run_string(kiln_script* script, const char* chunk, const char* chunk_name) {
  if (script == nullptr || chunk == nullptr)
    return kiln_error_set(KILN_ERR_INVALID_ARGUMENT, "kiln_script_run_string: 'script' and 'chunk' must not be NULL");
  lua_State* L = script->L;
  const int status = luaL_loadbufferx(L, chunk, std::strlen(chunk), chunk_name != nullptr ? chunk_name : "=chunk", "t");
  if (status != LUA_OK) return report(script, status, "");
  return run_loaded(script, 0);
}

kiln_status kiln_script_run_file(kiln_script* script, const char* path, const char* const* args, size_t n_args) {
  if (script == nullptr || path == nullptr || (args == nullptr && n_args > 0))
    return kiln_error_set(KILN_ERR_INVALID_ARGUMENT,
                          "kiln_script_run_file: 'script' and 'path' must not be NULL, nor 'args' when n_args > 0");
  lua_State* L = script->L;
  if (!lua_checkstack(L, int(n_args) + 4))
    return kiln_error_set(KILN_ERR_INVALID_ARGUMENT, "kiln_script_run_file: too many arguments");
  // Text only: a binary chunk is refused here, sandboxed or not.
  const int status = luaL_loadfilex(L, path, "t");
  if (status != LUA_OK) return report(script, status, "");
  // Made in protected mode: the table may hit the memory limit.
  ScriptArgs table{path, args, n_args};
  lua_pushcfunction(L, push_script_args);
  lua_pushlightuserdata(L, &table);
  const int made = lua_pcall(L, 1, int(n_args), 0);
  if (made != LUA_OK) {
    const kiln_status failed = report(script, made, "");
    lua_pop(L, 1);  // the loaded chunk
    return failed;
  }
  return run_loaded(script, int(n_args));
}

}  // extern "C"
