// Where a runtime looks for plugins when it is created (see
// kiln_runtime_options in kiln.h).
#pragma once

#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::abi {

// In order: options->plugin_paths (a folder stands for its lib*.so files),
// then unless options->skip_default_plugins the folders of
// KILN_PLUGIN_PATH and the install's plugin folder. `options` may be NULL.
std::vector<std::string> plugin_candidates(const kiln_runtime_options* options);

}  // namespace kiln::abi
