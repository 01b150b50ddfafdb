// kiln run [--threads N] [--seed N] [--sandbox] script.lua [args...]
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "kiln/kiln_script.h"
#include "run_options.hpp"

namespace kiln::cli {
namespace {

int run_script(const Command& self, const ScriptCommandLine& line) {
  kiln_runtime_options runtime_options{};
  runtime_options.size = sizeof runtime_options;
  runtime_options.num_threads = line.run.threads;
  runtime_options.seed = line.run.seed;
  const RuntimePtr rt = open_runtime(self, &runtime_options);
  if (!rt) return kExitFailure;

  kiln_script_options script_options{};
  script_options.size = sizeof script_options;
  script_options.sandbox = line.run.sandbox ? 1 : 0;
  kiln_script* raw_script = nullptr;
  if (kiln_script_create(rt.get(), &script_options, &raw_script) != KILN_OK)
    return library_failure(self, "cannot create the Lua state");
  const std::unique_ptr<kiln_script, decltype(&kiln_script_release)> script(raw_script, &kiln_script_release);

  std::vector<const char*> script_args;
  for (const std::string& a : line.script_args) script_args.push_back(a.c_str());
  if (kiln_script_run_file(script.get(), line.script.c_str(), script_args.data(), script_args.size()) != KILN_OK) {
    // The message carries the script's file:line and the Lua traceback.
    std::fprintf(stderr, "kiln run: %s\n", kiln_last_error());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int run_command(const Command& self, Args args) {
  ScriptCommandLine line;
  try {
    line = ScriptCommandLine::parse(args);
    if (line.help) {
      std::fputs(self.usage, stdout);
      return kExitOk;
    }
    check_readable(line.script);
  } catch (const UsageError& e) {
    return usage_error(self, e.message);
  }
  return run_script(self, line);
}

}  // namespace kiln::cli
