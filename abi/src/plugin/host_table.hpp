// The host table handed to a plugin's register_fn (see kiln_host in
// kiln_plugin.h): the C API's functions, and the few that exist for plugins
// only (registration, kernel helpers, randomness).
#pragma once

#include <cstdint>

#include "kiln/kiln_plugin.h"

namespace kiln::abi {

// A table for registering into `rt` at ABI `abi_version`.
kiln_host make_host_table(kiln_runtime* rt, uint32_t abi_version);

}  // namespace kiln::abi
