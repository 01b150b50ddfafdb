// Appends JSON text for the safetensors header the writer builds.
#pragma once

#include <string>
#include <string_view>

namespace kiln::checkpoint {

// Appends `s` (valid UTF-8) as a quoted JSON string: quotes, backslashes and
// control characters escaped, everything else as it is.
void append_json_string(std::string* out, std::string_view s);

}  // namespace kiln::checkpoint
