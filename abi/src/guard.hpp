// The border between the C API and the runtime: every entry point runs its
// body through guarded(), so no exception ever reaches the caller; failures
// become a kiln_status and a thread-local message naming the entry point.
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>

#include "kiln/kiln.h"

namespace kiln::abi {

// Records `message` as this thread's last error and returns `status`.
kiln_status set_error(kiln_status status, std::string_view function, std::string_view message) noexcept;
// Turns the exception being handled into a status and a message.
kiln_status error_from_current_exception(const char* function) noexcept;
// The error for argument number `index` of the comma-separated `names` being NULL.
kiln_status null_argument(const char* function, const char* names, size_t index) noexcept;

template <class Body>
kiln_status guarded(const char* function, Body&& body) noexcept {
  try {
    body();
    return KILN_OK;
  } catch (...) {
    return error_from_current_exception(function);
  }
}

}  // namespace kiln::abi

// KILN_REQUIRE(a, b, c): returns KILN_ERR_INVALID_ARGUMENT from the calling
// entry point, naming it and the argument, when any of the pointers is NULL.
#define KILN_REQUIRE(...)                                                        \
  do {                                                                           \
    const void* const kiln_required_[] = {__VA_ARGS__};                          \
    for (size_t kiln_i_ = 0; kiln_i_ < std::size(kiln_required_); ++kiln_i_)    \
      if (!kiln_required_[kiln_i_])                                              \
        return ::kiln::abi::null_argument(__func__, #__VA_ARGS__, kiln_i_);      \
  } while (0)
