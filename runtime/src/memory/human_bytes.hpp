// Sizes in messages that people read: "1.5 GiB".
#pragma once

#include <string>

namespace kiln {

std::string human_bytes(double bytes);

}  // namespace kiln
