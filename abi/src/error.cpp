// Status names and the per-thread message of the last failure.
#include <exception>
#include <new>
#include <string>

#include "guard.hpp"
#include "kiln/error.hpp"

namespace kiln::abi {
namespace {

static_assert(int(KILN_ERR_INVALID_ARGUMENT) == int(Status::invalid_argument));
static_assert(int(KILN_ERR_SHAPE_MISMATCH) == int(Status::shape_mismatch));
static_assert(int(KILN_ERR_DTYPE_MISMATCH) == int(Status::dtype_mismatch));
static_assert(int(KILN_ERR_DEVICE_MISMATCH) == int(Status::device_mismatch));
static_assert(int(KILN_ERR_NOT_FOUND) == int(Status::not_found));
static_assert(int(KILN_ERR_OUT_OF_MEMORY) == int(Status::out_of_memory));
static_assert(int(KILN_ERR_INVALID_STATE) == int(Status::invalid_state));
static_assert(int(KILN_ERR_UNSUPPORTED) == int(Status::unsupported));
static_assert(int(KILN_ERR_IO) == int(Status::io));
static_assert(int(KILN_ERR_INTERNAL) == int(Status::internal));
static_assert(int(KILN_ERR_PLUGIN_REFUSED) == int(Status::plugin_refused));
static_assert(int(KILN_ERR_SCRIPT) == int(Status::script_error));
static_assert(int(KILN_ERR_TIMEOUT) == int(Status::timeout));
static_assert(int(KILN_ERR_PEER) == int(Status::peer));

thread_local std::string tls_message;
// Points into tls_message, or at a static text when recording failed for
// lack of memory.
thread_local const char* tls_last_error = "";

}  // namespace

kiln_status set_error(kiln_status status, std::string_view function, std::string_view message) noexcept {
  try {
    // An empty `function` records the message as given (a plugin's own, through host->error).
    tls_message.assign(function).append(function.empty() ? "" : ": ").append(message);
    tls_last_error = tls_message.c_str();
  } catch (...) {
    tls_last_error = "out of memory while recording an error message";
  }
  return status;
}

kiln_status error_from_current_exception(const char* function) noexcept {
  try {
    throw;
  } catch (const Error& e) {
    return set_error(kiln_status(e.status()), function, e.what());
  } catch (const std::bad_alloc&) {
    return set_error(KILN_ERR_OUT_OF_MEMORY, function, "out of host memory");
  } catch (const std::exception& e) {
    return set_error(KILN_ERR_INTERNAL, function, std::string("internal error: ") + e.what());
  } catch (...) {
    return set_error(KILN_ERR_INTERNAL, function, "internal error: an unknown exception");
  }
}

kiln_status null_argument(const char* function, const char* names, size_t index) noexcept {
  std::string_view rest(names);
  for (size_t i = 0; i < index; ++i) rest.remove_prefix(rest.find(',') + 1);
  rest = rest.substr(0, rest.find(','));
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  try {
    return set_error(KILN_ERR_INVALID_ARGUMENT, function, "argument '" + std::string(rest) + "' is NULL");
  } catch (...) {
    return set_error(KILN_ERR_INVALID_ARGUMENT, function, "an argument is NULL");
  }
}

}  // namespace kiln::abi

extern "C" {

const char* kiln_status_name(kiln_status status) { return kiln::status_name(kiln::Status(status)); }

const char* kiln_last_error(void) { return kiln::abi::tls_last_error; }

kiln_status kiln_error_set(kiln_status status, const char* message) {
  return kiln::abi::set_error(status, "", message ? message : "");
}

}
