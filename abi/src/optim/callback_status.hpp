// Plugin callbacks report failures as a status plus the message they gave
// host->error. The optimizer and schedule code turns such a failure into the
// runtime's exception, naming the object so the host sees whose it was.
#pragma once

#include <string>
#include <string_view>

#include "kiln/kiln_types.h"

namespace kiln::abi {

// "optimizer 'Adam' (plugin 'kiln-optim')"
std::string describe_registered(std::string_view kind, std::string_view name, std::string_view plugin);

// Throws kiln::Error with `status` and "<who>: <the callback's message>"
// unless `status` is KILN_OK.
void check_callback(kiln_status status, std::string_view who);

}  // namespace kiln::abi
