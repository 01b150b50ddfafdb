// kiln.dist for the other parts of the module: where this process stands in
// its job (kiln.data's `shard = true`, kiln.fit's strategies).
#pragma once

#include "binding.hpp"

namespace kiln::lua {

// This process's rank and the job's size: those of the runtime's default
// group inside a job (RANK and WORLD_SIZE are set; the group is made on
// first use), 0 and 1 outside one.
void job_rank(lua_State* L, int* rank, int* world_size);

}  // namespace kiln::lua
