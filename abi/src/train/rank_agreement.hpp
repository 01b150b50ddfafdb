// Ranks of a data-parallel job must take the same steps: a rank that is a
// step ahead or holds another model would deadlock the next collective or
// write a checkpoint that mixes two runs. Before it matters (training
// starts, a checkpoint is written) the trainer compares the ranks' values
// through the default process group and refuses, naming the rank, when they
// differ.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "kiln/kiln.h"

namespace kiln::train {

struct RankValue {
  const char* name;  // "step"
  int64_t value;
};

// Throws Status::invalid_state ("<what>: rank 1 has step 12, rank 0 has 13")
// when any value differs between the ranks of the runtime's default group.
void check_ranks_agree(kiln_runtime* rt, std::string_view what, std::span<const RankValue> values);

}  // namespace kiln::train
