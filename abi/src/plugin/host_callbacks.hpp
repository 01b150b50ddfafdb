// The host-table functions that belong to modules and optimizers (see
// kiln_host in kiln_plugin.h for their contracts). The plugin host puts
// them in the table; the module and optimizer code defines them.
#pragma once

#include "kiln/kiln_plugin.h"

namespace kiln::abi::host {

kiln_runtime* layer_init_runtime(kiln_layer_init* init);
kiln_status layer_add_parameter(kiln_layer_init* init, const char* name, kiln_tensor* t);
kiln_status layer_add_buffer(kiln_layer_init* init, const char* name, kiln_tensor* t);
kiln_status layer_add_child(kiln_layer_init* init, const char* name, kiln_module* child);
kiln_status optimizer_add_state(kiln_optimizer_state_init* init, const char* name, kiln_tensor* t);

}  // namespace kiln::abi::host
