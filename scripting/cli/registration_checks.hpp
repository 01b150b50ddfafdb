// The checks of `kiln plugin-check` for what a plugin registers: each op
// and each layer type, one report line per check.
#pragma once

#include <string>
#include <vector>

#include "check_report.hpp"
#include "kiln/kiln.h"
#include "module_checks.hpp"

namespace kiln::cli {

// Each op is called with 1, 2 or 3 random f64 inputs of shape 2x4 and no
// attributes (the C API has no op schema to say more); the first call that
// succeeds is checked. An op that takes none of these is reported skipped.
void check_ops(kiln_runtime* rt, const std::vector<std::string>& names, const DeviceTarget& device,
               CheckReport* report);

// Each layer type is built with its defaults, or its required entries
// filled (see layer_config.hpp), cast to f64 in eval mode, and given a
// random f64 input of shape 2x4, 2x4x4 or 2x4x4x4 (the first it takes).
void check_layers(kiln_runtime* rt, const std::vector<std::string>& types, const DeviceTarget& device,
                  CheckReport* report);

}  // namespace kiln::cli
