// kiln::Error and the conversions between it and kiln_status: a failing C
// call becomes an exception carrying its status and kiln_last_error()'s
// message, and an exception thrown where C frames are on the stack (a
// callback the library calls) is parked, reported through kiln_error_set and
// rethrown once the C call has returned.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

#include "kiln/kiln.h"

namespace kiln {

// What every failure of the wrapper throws: the status of the C call and
// the message the library recorded for it.
class Error : public std::runtime_error {
 public:
  Error(kiln_status status, const std::string& message) : std::runtime_error(message), status_(status) {}

  kiln_status status() const noexcept { return status_; }
  // "shape mismatch", "not found", ...
  const char* status_name() const noexcept { return kiln_status_name(status_); }

 private:
  kiln_status status_;
};

// Throws kiln::Error for a failed status. Also for hosts that mix calls of
// kiln.h with the wrapper: kiln::check(kiln_manual_seed(rt.get(), 1)).
inline void check(kiln_status status) {
  if (status != KILN_OK) throw Error(status, kiln_last_error());
}

// The library's version, "MAJOR.MINOR.PATCH".
inline std::string version() { return kiln_version(); }

namespace detail {

// A failure the wrapper finds itself: recorded as this thread's last error,
// as the library records its own, then thrown.
[[noreturn]] inline void fail(kiln_status status, const std::string& message) {
  kiln_error_set(status, message.c_str());
  throw Error(status, message);
}

// Holds the exception a host callback threw while the library was calling
// it. Unwinding through the library's C frames is undefined, so the
// callback's exception stops at the trampoline, which reports a failure to
// the library the C way; the wrapper rethrows the parked exception when the
// C call returns, so the host sees the exception it threw, of its own type.
class ParkedException {
 public:
  // Runs `callback` (returning the int the C callback returns). When it
  // throws, parks the exception and returns the failure status recorded
  // with kiln_error_set: a kiln::Error keeps its status and message, any
  // other exception becomes KILN_ERR_INVALID_STATE with "<name> threw: <what>".
  template <class Callback>
  int call(const char* name, Callback&& callback) noexcept {
    try {
      return callback();
    } catch (const Error& e) {
      pending_ = std::current_exception();
      return kiln_error_set(e.status(), e.what());
    } catch (const std::exception& e) {
      pending_ = std::current_exception();
      return report(name, e.what());
    } catch (...) {
      pending_ = std::current_exception();
      return report(name, "an exception that is not a std::exception");
    }
  }

  // After the C call: rethrows the parked exception, if any, and forgets it.
  void rethrow_if_any() {
    if (!pending_) return;
    std::exception_ptr e = pending_;
    pending_ = nullptr;
    std::rethrow_exception(e);
  }

 private:
  static int report(const char* name, const char* what) noexcept {
    try {
      return kiln_error_set(KILN_ERR_INVALID_STATE, (std::string(name) + " threw: " + what).c_str());
    } catch (...) {  // no memory for the message: the status still says it failed
      return kiln_error_set(KILN_ERR_INVALID_STATE, what);
    }
  }

  std::exception_ptr pending_;
};

}  // namespace detail
}  // namespace kiln
