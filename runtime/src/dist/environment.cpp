// The job's shape from the environment, as torchrun, SLURM-style launchers
// and `kiln launch` set it.
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string>

#include "kiln/dist/process_group.hpp"
#include "kiln/error.hpp"

namespace kiln::dist {
namespace {

const char* variable(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

int64_t whole_number(const char* name, const char* value, int64_t low, int64_t high) {
  int64_t n = 0;
  std::string_view text(value);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  KILN_CHECK(ec == std::errc() && end == text.data() + text.size() && n >= low && n <= high,
             Status::invalid_argument, "the environment variable ", name, " must be a whole number in [", low, ", ",
             high, "], got '", value, "'");
  return n;
}

int64_t required(const char* name, int64_t low, int64_t high) {
  const char* value = variable(name);
  KILN_CHECK(value, Status::invalid_argument, "the environment variable ", name,
             " is not set: start the job with `kiln launch` (or torchrun, srun, ...), which sets RANK, "
             "WORLD_SIZE, MASTER_ADDR and MASTER_PORT");
  return whole_number(name, value, low, high);
}

}  // namespace

bool ProcessGroupOptions::environment_has_job() { return variable("RANK") && variable("WORLD_SIZE"); }

ProcessGroupOptions ProcessGroupOptions::from_environment() {
  ProcessGroupOptions o;
  o.world_size = int(required("WORLD_SIZE", 1, 1 << 20));
  o.rank = int(required("RANK", 0, o.world_size - 1));
  o.take_environment_address();
  return o;
}

void ProcessGroupOptions::take_environment_address() {
  if (const char* addr = variable("MASTER_ADDR")) master_addr = addr;
  if (const char* port = variable("MASTER_PORT")) master_port = uint16_t(whole_number("MASTER_PORT", port, 1, 65535));
  if (const char* t = variable("KILN_DIST_TIMEOUT")) {
    timeout = std::chrono::seconds(whole_number("KILN_DIST_TIMEOUT", t, 1, int64_t(1) << 31));
  }
}

}  // namespace kiln::dist
