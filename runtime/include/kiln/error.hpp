// Errors inside the runtime are exceptions of one type, kiln::Error, carrying a
// status code that the C API hands to the host unchanged. Nothing in the
// runtime aborts: every failure is one of these, caught at the C API border.
#pragma once

#include <stdexcept>
#include <string>

#include "kiln/util/str_cat.hpp"

namespace kiln {

// Values are the C API's kiln_status codes; keep the two in step.
enum class Status : int {
  ok = 0,
  invalid_argument = 1,
  shape_mismatch = 2,
  dtype_mismatch = 3,
  device_mismatch = 4,
  not_found = 5,
  out_of_memory = 6,
  invalid_state = 7,
  unsupported = 8,
  io = 9,
  internal = 10,
  plugin_refused = 11,
  script_error = 12,
  timeout = 13,
  peer = 14,
};

const char* status_name(Status s);

class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

[[noreturn]] void throw_error(Status status, std::string message);

}  // namespace kiln

// KILN_CHECK(cond, Status::shape_mismatch, "op '", name, "': ...") throws when
// cond is false; the message is only built on failure.

#define KILN_CHECK(cond, status, ...)                                    \
  do {                                                                   \
    if (!(cond)) ::kiln::throw_error((status), ::kiln::str_cat(__VA_ARGS__)); \
  } while (0)
