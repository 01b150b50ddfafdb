// Calling back into a plugin: a failing status becomes an error carrying
// the plugin's message (this thread's last error, recorded by host->error)
// with the object and its plugin named, as kiln_plugin.h promises.
#pragma once

#include <string>
#include <string_view>

#include "kiln/kiln_types.h"

namespace kiln::abi {

// "optimizer 'Adam' (plugin 'kiln-optim')": how messages name an object
// made by a registered type.
std::string describe_registered(std::string_view kind, std::string_view name, std::string_view plugin);

// Throws "<who>: <the plugin's message>" with the callback's status (an
// unknown status becomes an internal error) unless `status` is KILN_OK.
void check_plugin_call(kiln_status status, std::string_view who);

}  // namespace kiln::abi
