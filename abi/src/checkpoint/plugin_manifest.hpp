// The plugins a runtime has loaded, by name with their versions: what a
// training state records as the manifest of what made it, and what loading
// one compares against.
#pragma once

#include <map>
#include <string>

#include "kiln/kiln.h"

namespace kiln::abi {

using PluginVersions = std::map<std::string, std::string, std::less<>>;

PluginVersions loaded_plugins(kiln_runtime* rt);

}  // namespace kiln::abi
