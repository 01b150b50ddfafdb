// kiln run [--threads N] [--seed N] [--sandbox] script.lua [args...]
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "command.hpp"
#include "kiln/kiln_script.h"

namespace kiln::cli {
namespace {

struct RunOptions {
  bool help = false;
  int threads = 0;
  uint64_t seed = 0;
  bool sandbox = false;
  std::string script;
  std::vector<std::string> script_args;
};

// What was wrong with the command line, in words.
struct UsageError {
  std::string message;
};

// `text` as a whole number in [0, max]; throws naming `option` otherwise.
template <class Int>
Int parse_count(std::string_view option, std::string_view text, Int max) {
  Int value{};
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (err != std::errc() || end != text.data() + text.size() || std::cmp_less(value, 0) || value > max)
    throw UsageError{std::string(option) + " expects a whole number >= 0, got '" + std::string(text) + "'"};
  return value;
}

// The options before the script, the script and its arguments.
RunOptions parse(Args args) {
  RunOptions options;
  size_t i = 0;
  // The value of option `name` given as `arg`: "--name=value" or "--name value".
  const auto value_of = [&](std::string_view name, std::string_view arg) -> std::string_view {
    if (arg.size() > name.size() && arg[name.size()] == '=') return arg.substr(name.size() + 1);
    if (arg.size() != name.size()) throw UsageError{"unknown option '" + std::string(arg) + "'"};
    if (i + 1 == args.size()) throw UsageError{std::string(name) + " needs a value"};
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.empty() || arg.front() != '-') break;
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      return options;
    }
    if (arg == "--sandbox") {
      options.sandbox = true;
    } else if (arg.starts_with("--threads")) {
      options.threads = parse_count("--threads", value_of("--threads", arg), std::numeric_limits<int>::max());
    } else if (arg.starts_with("--seed")) {
      options.seed = parse_count("--seed", value_of("--seed", arg), std::numeric_limits<uint64_t>::max());
    } else {
      throw UsageError{"unknown option '" + std::string(arg) + "'"};
    }
  }
  if (i == args.size()) throw UsageError{"missing the script to run"};
  options.script = args[i];
  options.script_args.assign(args.begin() + long(i) + 1, args.end());
  return options;
}

// A script that cannot be opened is a wrong command line, said before any
// runtime starts.
void check_readable(const std::string& path) {
  const std::unique_ptr<std::FILE, decltype(&std::fclose)> file(std::fopen(path.c_str(), "r"), &std::fclose);
  if (!file) throw UsageError{"cannot open the script '" + path + "': " + std::strerror(errno)};
}

int run_script(const Command& self, const RunOptions& options) {
  kiln_runtime_options runtime_options{};
  runtime_options.size = sizeof runtime_options;
  runtime_options.num_threads = options.threads;
  runtime_options.seed = options.seed;
  const RuntimePtr rt = open_runtime(self, &runtime_options);
  if (!rt) return kExitFailure;

  kiln_script_options script_options{};
  script_options.size = sizeof script_options;
  script_options.sandbox = options.sandbox ? 1 : 0;
  kiln_script* raw_script = nullptr;
  if (kiln_script_create(rt.get(), &script_options, &raw_script) != KILN_OK)
    return library_failure(self, "cannot create the Lua state");
  const std::unique_ptr<kiln_script, decltype(&kiln_script_release)> script(raw_script, &kiln_script_release);

  std::vector<const char*> script_args;
  for (const std::string& a : options.script_args) script_args.push_back(a.c_str());
  if (kiln_script_run_file(script.get(), options.script.c_str(), script_args.data(), script_args.size()) !=
      KILN_OK) {
    // The message carries the script's file:line and the Lua traceback.
    std::fprintf(stderr, "kiln run: %s\n", kiln_last_error());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int run_command(const Command& self, Args args) {
  RunOptions options;
  try {
    options = parse(args);
    if (options.help) {
      std::fputs(self.usage, stdout);
      return kExitOk;
    }
    check_readable(options.script);
  } catch (const UsageError& e) {
    return usage_error(self, e.message);
  }
  return run_script(self, options);
}

}  // namespace kiln::cli
