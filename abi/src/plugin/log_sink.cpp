#include "plugin/log_sink.hpp"

#include <cstdio>
#include <string>

namespace kiln::abi {
namespace {

const char* level_name(kiln_log_level level) {
  switch (level) {
    case KILN_LOG_DEBUG: return "debug";
    case KILN_LOG_INFO: return "info";
    case KILN_LOG_WARNING: return "warning";
    case KILN_LOG_ERROR: return "error";
  }
  return "log";
}

}  // namespace

void LogSink::write(kiln_log_level level, std::string_view message) const noexcept {
  if (level < KILN_LOG_WARNING && !verbose_) return;
  try {
    const std::string text(message);  // the callback gets a terminated string
    if (fn_) fn_(user_data_, level, text.c_str());
    else std::fprintf(stderr, "kiln: %s: %s\n", level_name(level), text.c_str());
  } catch (...) {
    // No memory for the copy: the message is lost, the caller goes on.
  }
}

}  // namespace kiln::abi
