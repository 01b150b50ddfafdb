// Where a runtime's warnings and errors go: the host's callback, or stderr.
#pragma once

#include <string_view>

#include "kiln/kiln_types.h"

namespace kiln::abi {

class LogSink {
 public:
  LogSink() = default;
  // `fn` NULL: stderr. `verbose`: info and debug messages too.
  LogSink(kiln_log_fn fn, void* user_data, bool verbose) : fn_(fn), user_data_(user_data), verbose_(verbose) {}

  void write(kiln_log_level level, std::string_view message) const noexcept;

 private:
  kiln_log_fn fn_ = nullptr;
  void* user_data_ = nullptr;
  bool verbose_ = false;
};

}  // namespace kiln::abi
