// The commands of the `kiln` executable and what they share: exit codes,
// how usage errors and library failures are reported, and the runtime
// handle. Each command lives in its own file and receives the arguments
// that follow its name.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "kiln/kiln.h"

namespace kiln::cli {

// 0: done; 1: the work failed (a script error, a library failure); 2: the
// command line was wrong (as getopt-based tools and Python do).
enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

using Args = std::span<const std::string_view>;

struct Command {
  const char* name;
  const char* summary;  // one line, for `kiln --help`
  const char* usage;    // the whole help, for `kiln <name> --help`
  int (*run)(const Command& self, Args args);
};

// Prints "kiln <command>: <message>" and the command's usage on stderr;
// returns kExitUsage.
int usage_error(const Command& command, std::string_view message);
// For commands that take no arguments: kExitOk when `args` is empty, the
// usage error naming the first one otherwise.
int check_no_arguments(const Command& command, Args args);
// Prints "kiln <command>: <what>: kiln_last_error()" on stderr; returns kExitFailure.
int library_failure(const Command& command, std::string_view what);

using RuntimePtr = std::unique_ptr<kiln_runtime, decltype(&kiln_runtime_release)>;
// A runtime with its default plugins, or nullptr after reporting why not.
RuntimePtr open_runtime(const Command& command, const kiln_runtime_options* options);

int run_command(const Command& self, Args args);
int launch_command(const Command& self, Args args);
int plugins_command(const Command& self, Args args);
int ops_command(const Command& self, Args args);
int plugin_check_command(const Command& self, Args args);
int info_command(const Command& self, Args args);
int version_command(const Command& self, Args args);

}  // namespace kiln::cli
