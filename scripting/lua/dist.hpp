// kiln.dist for the other parts of the module: where this process stands in
// its job (kiln.data's `shard = true`, kiln.fit's strategies).
#pragma once

#include "binding.hpp"

namespace kiln::lua {

// This process's rank and the job's size (RANK and WORLD_SIZE, checked),
// 0 and 1 outside a job; nobody is contacted.
void job_rank(lua_State* L, int* rank, int* world_size);

}  // namespace kiln::lua
