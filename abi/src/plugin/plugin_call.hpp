// Calling back into a plugin: a failing status becomes an error carrying
// the plugin's message (this thread's last error) with the object and the
// plugin named, as kiln_plugin.h promises.
#pragma once

#include <string_view>

#include "kiln/kiln_types.h"

namespace kiln::abi {

// Throws "<object> of plugin '<plugin>': <callback>: <message>" unless `status` is KILN_OK.
void check_plugin_call(kiln_status status, std::string_view object, std::string_view plugin, std::string_view callback);

}  // namespace kiln::abi
