// Reporting shared by the commands.
#include <cstdio>
#include <string>

#include "command.hpp"

namespace kiln::cli {

int usage_error(const Command& command, std::string_view message) {
  std::fprintf(stderr, "kiln %s: %.*s\n\n%s", command.name, int(message.size()), message.data(), command.usage);
  return kExitUsage;
}

int check_no_arguments(const Command& command, Args args) {
  if (args.empty()) return kExitOk;
  return usage_error(command, "takes no arguments, got '" + std::string(args.front()) + "'");
}

int library_failure(const Command& command, std::string_view what) {
  std::fprintf(stderr, "kiln %s: %.*s: %s\n", command.name, int(what.size()), what.data(), kiln_last_error());
  return kExitFailure;
}

RuntimePtr open_runtime(const Command& command, const kiln_runtime_options* options) {
  kiln_runtime* rt = nullptr;
  if (kiln_runtime_create(options, &rt) != KILN_OK) library_failure(command, "cannot create the runtime");
  return RuntimePtr(rt, &kiln_runtime_release);
}

}  // namespace kiln::cli
