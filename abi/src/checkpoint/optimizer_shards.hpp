// The optimizer's state under a strategy that shards it ("zero1"): each
// parameter's state lives on the rank that owns it. A saved training state
// holds all of it, as one process writes it, so rank 0 receives each
// parameter's state from its owner; a loaded one gives each rank the
// entries of the parameters it owns, whatever the number of ranks that
// saved it.
#pragma once

#include <string_view>
#include <vector>

#include "checkpoint/tensor_file.hpp"
#include "kiln/kiln.h"

namespace kiln::train {

// owners[i]: the rank that keeps the state of the optimizer's parameter i,
// or -1 when every rank keeps it; empty when the trainer's strategy shards
// nothing.
std::vector<int> optimizer_state_owners(const kiln_trainer& t);

// Every rank calls it with the same owners. Rank 0 receives the state of
// the parameters owned by other ranks, named as kiln_optimizer_state_get
// names entries ("<i>.step", "<i>.<state>"); each other rank sends the
// state it owns and gets nothing back.
abi::StateTensors gather_owned_state(kiln_trainer& t, const std::vector<int>& owners);

// Whether optimizer entry `name` ("step", "<i>.step" or "<i>.<state>")
// belongs to this rank: the step count and every entry of a parameter that
// it owns or that every rank keeps.
bool keeps_entry(const kiln_trainer& t, const std::vector<int>& owners, std::string_view name);

}  // namespace kiln::train
