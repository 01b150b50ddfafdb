// kiln run [--threads N] [--seed N] [--direct-conv] [--sandbox] [--report] [--profile]
//          [--trace FILE] script.lua [args...]
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "kiln/kiln_script.h"
#include "run_options.hpp"

namespace kiln::cli {
namespace {

// kiln run's own options (kiln launch does not pass them on: ranks would
// all write one trace file).
struct ProfileOptions {
  bool table = false;  // --profile: the table on stderr at the end
  std::string trace;   // --trace FILE: Chrome trace JSON

  bool any() const { return table || !trace.empty(); }
  bool read(OptionReader& reader) {
    if (reader.current() == "--profile") {
      table = true;
    } else if (reader.is("--trace")) {
      trace = reader.value("--trace");
      if (trace.empty()) throw UsageError{"--trace needs a file name"};
    } else {
      return false;
    }
    return true;
  }
};

// Prints the profile table on stderr; false after saying why it could not.
bool print_table(const Command& self, kiln_runtime* rt) {
  size_t length = 0;
  std::string table;
  if (kiln_profiler_report(rt, nullptr, 0, &length) == KILN_OK) {
    table.resize(length);
    if (kiln_profiler_report(rt, table.data(), length + 1, nullptr) == KILN_OK) {
      std::fprintf(stderr, "\n%s", table.c_str());
      return true;
    }
  }
  library_failure(self, "cannot make the profile table");
  return false;
}

// Ends the profile of the whole run and writes what `profile` asked for,
// whether or not the script succeeded; false after saying what failed.
bool finish_profile(const Command& self, kiln_runtime* rt, const ProfileOptions& profile) {
  if (kiln_profiler_end(rt) != KILN_OK) {
    library_failure(self, "cannot end profiling");
    return false;
  }
  bool ok = !profile.table || print_table(self, rt);
  if (!profile.trace.empty() && kiln_profiler_write_trace(rt, profile.trace.c_str()) != KILN_OK) {
    library_failure(self, "cannot write the trace");
    ok = false;
  }
  return ok;
}

int run_script(const Command& self, const ScriptCommandLine& line, const ProfileOptions& profile) {
  kiln_runtime_options runtime_options{};
  runtime_options.size = sizeof runtime_options;
  runtime_options.num_threads = line.run.threads;
  runtime_options.seed = line.run.seed;
  runtime_options.direct_convolutions = line.run.direct_convolutions ? 1 : 0;
  const RuntimePtr rt = open_runtime(self, &runtime_options);
  if (!rt) return kExitFailure;

  kiln_script_options script_options{};
  script_options.size = sizeof script_options;
  script_options.sandbox = line.run.sandbox ? 1 : 0;
  script_options.report = line.run.report ? 1 : 0;
  kiln_script* raw_script = nullptr;
  if (kiln_script_create(rt.get(), &script_options, &raw_script) != KILN_OK)
    return library_failure(self, "cannot create the Lua state");
  const std::unique_ptr<kiln_script, decltype(&kiln_script_release)> script(raw_script, &kiln_script_release);

  if (profile.any() && kiln_profiler_begin(rt.get()) != KILN_OK)
    return library_failure(self, "cannot begin profiling");
  std::vector<const char*> script_args;
  for (const std::string& a : line.script_args) script_args.push_back(a.c_str());
  int exit_code = kExitOk;
  if (kiln_script_run_file(script.get(), line.script.c_str(), script_args.data(), script_args.size()) != KILN_OK) {
    // The message carries the script's file:line and the Lua traceback.
    std::fprintf(stderr, "kiln run: %s\n", kiln_last_error());
    exit_code = kExitFailure;
  }
  if (profile.any() && !finish_profile(self, rt.get(), profile)) exit_code = kExitFailure;
  return exit_code;
}

}  // namespace

int run_command(const Command& self, Args args) {
  ScriptCommandLine line;
  ProfileOptions profile;
  try {
    line = ScriptCommandLine::parse(args, [&](OptionReader& reader) { return profile.read(reader); });
    if (line.help) {
      std::fputs(self.usage, stdout);
      return kExitOk;
    }
    check_readable(line.script);
  } catch (const UsageError& e) {
    return usage_error(self, e.message);
  }
  return run_script(self, line, profile);
}

}  // namespace kiln::cli
