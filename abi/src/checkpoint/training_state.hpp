// A trainer's whole state in one safetensors file (see kiln_trainer_save):
// tensors "model.<name>" and "optimizer.<entry>", and metadata for the
// rest (state_metadata.hpp lists the keys).
#pragma once

#include <string>

#include "kiln/kiln.h"

namespace kiln::train {

void save_training_state(kiln_trainer& t, const std::string& path);
void load_training_state(kiln_trainer& t, const std::string& path);

}  // namespace kiln::train
