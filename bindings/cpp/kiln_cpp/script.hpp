// kiln::Script: a Lua state with the kiln module, bound to a runtime
// (kiln_script.h; link libkiln_lua.so, the CMake target kiln::lua, to use
// it). Move-only: the C API has no retain for scripts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "c_strings.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "kiln/kiln_script.h"
#include "runtime.hpp"

namespace kiln {

// kiln_script_options; the defaults are a trusted script without limits.
struct ScriptOptions {
  bool sandbox = false;           // for untrusted scripts: an allow-listed environment
  int64_t instruction_limit = 0;  // Lua VM instructions per run; 0: none
  size_t memory_limit = 0;        // bytes the Lua state may hold; 0: none
};

class Script : public detail::UniqueHandle<kiln_script, kiln_script_release> {
 public:
  explicit Script(const Runtime& rt, const ScriptOptions& options = {}) {
    kiln_script_options o{};
    o.size = sizeof o;
    o.sandbox = options.sandbox;
    o.instruction_limit = options.instruction_limit;
    o.memory_limit = options.memory_limit;
    kiln_script* s = nullptr;
    check(kiln_script_create(rt.get(), &o, &s));
    *this = adopt(s);
  }
  explicit Script(std::nullptr_t) noexcept {}
  // Takes over the caller's handle.
  static Script adopt(kiln_script* s) noexcept { return Script(s); }

  // Runs a chunk of Lua; `chunk_name` names it in messages ("=name", or
  // "@file.lua"). A failing run throws kiln::Error with KILN_ERR_SCRIPT (or
  // the status of the runtime error the script did not catch), the
  // script's file:line and a traceback.
  void run_string(const std::string& chunk, const std::string& chunk_name = "=chunk") {
    check(kiln_script_run_string(get(), chunk.c_str(), chunk_name.c_str()));
  }
  // Runs a Lua file with `args` as its `arg` and `...`.
  void run_file(const std::string& path, const std::vector<std::string>& args = {}) {
    const std::vector<const char*> c_args = detail::c_strings(args);
    check(kiln_script_run_file(get(), path.c_str(), c_args.data(), c_args.size()));
  }

 private:
  explicit Script(kiln_script* s) noexcept : UniqueHandle(s) {}
};

}  // namespace kiln
