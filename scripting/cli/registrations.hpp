// What one loaded plugin registers, by kind, as `kiln plugins` and `kiln
// plugin-check` print it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::cli {

// Names registered by one plugin, by kind, in the kinds' enum order.
using Registrations = std::map<kiln_registration_kind, std::vector<std::string>>;

// The `count` registrations of plugin number `plugin`; false when the
// runtime cannot say (kiln_last_error() tells why).
bool collect_registrations(kiln_runtime* rt, size_t plugin, size_t count, Registrations* out);

// "  layers (21): Linear, Conv2d, ..." per kind, wrapped under a hanging indent.
void print_registrations(const Registrations& registrations);

}  // namespace kiln::cli
