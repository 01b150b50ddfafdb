// Losses of kiln.nn as callables over the runtime's loss ops (nn_losses.cpp).
#pragma once

#include <string>

#include "binding.hpp"

namespace kiln::lua {

// Adds CrossEntropyLoss, MSELoss, NLLLoss and BCEWithLogitsLoss to the
// kiln.nn table at `nn_index`.
void add_losses(lua_State* L, int nn_index);

// The loss op named by the value at `index` for the trainer, which takes a
// loss by op name: a string ("cross_entropy"), or a loss made by kiln.nn
// without options (the trainer cannot pass them on, so a loss with options
// raises saying so).
std::string check_trainer_loss(lua_State* L, int index);

}  // namespace kiln::lua
