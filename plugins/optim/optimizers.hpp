// The optimizer types of the plugin, each made for the runtime it is
// registered in (see optimizer_type).
#pragma once

#include "kiln/kiln_plugin.h"
#include "optimizer_type.hpp"

namespace kiln_optim {

kiln_optimizer_type sgd_type(kiln_runtime* rt);
kiln_optimizer_type adam_type(kiln_runtime* rt);
kiln_optimizer_type adamw_type(kiln_runtime* rt);
kiln_optimizer_type rmsprop_type(kiln_runtime* rt);
kiln_optimizer_type adagrad_type(kiln_runtime* rt);

}  // namespace kiln_optim
