// A TCP port that nothing uses on an address of this machine, for the
// rendezvous of a one-node `kiln launch`.
#pragma once

#include <cstdint>
#include <string>

namespace kiln::cli {

// Binds port 0 on `address` (a name or a numeric address), reads the port
// the system chose and lets it go; the ranks start soon after. Throws
// std::runtime_error saying why when `address` cannot be bound.
uint16_t find_free_port(const std::string& address);

}  // namespace kiln::cli
