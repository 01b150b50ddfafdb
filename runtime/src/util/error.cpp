#include "kiln/error.hpp"

namespace kiln {

const char* status_name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::invalid_argument: return "invalid argument";
    case Status::shape_mismatch: return "shape mismatch";
    case Status::dtype_mismatch: return "dtype mismatch";
    case Status::device_mismatch: return "device mismatch";
    case Status::not_found: return "not found";
    case Status::out_of_memory: return "out of memory";
    case Status::invalid_state: return "invalid state";
    case Status::unsupported: return "unsupported";
    case Status::io: return "i/o error";
    case Status::internal: return "internal error";
    case Status::plugin_refused: return "plugin refused";
    case Status::script_error: return "script error";
    case Status::timeout: return "timeout";
    case Status::peer: return "peer failure";
  }
  return "unknown status";
}

void throw_error(Status status, std::string message) { throw Error(status, std::move(message)); }

}  // namespace kiln
