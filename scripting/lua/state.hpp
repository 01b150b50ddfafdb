// What the kiln module keeps per Lua state, beyond what binding.hpp shows:
// the runtime it was opened for, the cache of op handles, and the status of
// the last runtime error raised into the script (so that a host learns the
// runtime's status, not only KILN_ERR_SCRIPT, when the script did not catch it).
#pragma once

#include <string>
#include <unordered_map>

#include "binding.hpp"

namespace kiln::lua {

struct StateData {
  kiln_runtime* rt = nullptr;  // one reference, dropped with the state
  std::unordered_map<std::string, const kiln_op*> ops;
  kiln_status raised_status = KILN_OK;
  std::string raised_message;  // exactly the error value raised, with its position
  // What a run that ends in an error returns (set by its message handler).
  kiln_status uncaught_status = KILN_ERR_SCRIPT;
  // kiln_script_options.report: every kiln.fit prints its training report.
  bool report_every_fit = false;
};

// Binds `L` to `rt` (taking a reference); before the module is opened.
void attach_runtime(lua_State* L, kiln_runtime* rt);
StateData& state_data(lua_State* L);  // raises when not attached
StateData* find_state_data(lua_State* L);  // nullptr when not attached

}  // namespace kiln::lua
