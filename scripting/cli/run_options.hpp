// The command line of a command that runs a script, `kiln run` and
// `kiln launch`: "[options] script.lua [args...]", where the options are
// kiln run's (--threads, --seed, --sandbox, --report) and those the command adds.
// Options take "--name value" or "--name=value"; "--" ends them.
#pragma once

#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "command.hpp"

namespace kiln::cli {

// What was wrong with the command line, in words (usage_error prints it).
struct UsageError {
  std::string message;
};

// `text` as a whole number in [min, max], or nothing.
template <class Int>
std::optional<Int> to_whole_number(std::string_view text, Int min, Int max) {
  Int value{};
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (err != std::errc() || end != text.data() + text.size() || value < min || value > max) return std::nullopt;
  return value;
}

// `text` as a whole number in [min, max]; throws naming `option` and `text` otherwise.
template <class Int>
Int parse_whole_number(std::string_view option, std::string_view text, Int min,
                       Int max = std::numeric_limits<Int>::max()) {
  if (const std::optional<Int> value = to_whole_number(text, min, max)) return *value;
  const std::string range = max == std::numeric_limits<Int>::max()
                                ? ">= " + std::to_string(min)
                                : "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  throw UsageError{std::string(option) + " expects a whole number " + range + ", got '" + std::string(text) + "'"};
}

// The options before the script, in order. `current()` is the argument
// being read; an option's value is the text after '=' or the next argument.
class OptionReader {
 public:
  explicit OptionReader(Args args) : args_(args) {}

  bool at_end() const { return i_ == args_.size(); }
  void advance() { ++i_; }
  // current() and what follows it.
  Args remaining() const { return args_.subspan(i_); }
  std::string_view current() const { return args_[i_]; }
  // Whether current() is option `name`, alone or as "name=value".
  bool is(std::string_view name) const;
  // The value of option `name` (current() is it); throws when it has none.
  std::string_view value(std::string_view name);

 private:
  Args args_;
  size_t i_ = 0;
};

// The options of `kiln run`, as given.
struct RunOptions {
  int threads = 0;
  uint64_t seed = 0;
  bool sandbox = false;
  bool report = false;  // every kiln.fit prints its training report
  bool direct_convolutions = false;  // kiln_runtime_options.direct_convolutions

  // Reads the option at `reader.current()` when it is one of kiln run's;
  // false when it is not.
  bool read(OptionReader& reader);
  // These options as kiln run's arguments ("--threads=4", ...); the defaults
  // are left out.
  std::vector<std::string> arguments() const;
};

struct ScriptCommandLine {
  bool help = false;  // --help or -h came among the options: nothing else was read
  RunOptions run;
  std::string script;
  std::vector<std::string> script_args;

  // Reads `args`. `read_option` reads the command's own options: called with
  // each option that is not kiln run's, it returns false for an unknown one
  // (null: kiln run's options alone). Throws UsageError.
  static ScriptCommandLine parse(Args args, const std::function<bool(OptionReader&)>& read_option = nullptr);
};

// Throws UsageError when the script cannot be opened: a wrong command line,
// said before any runtime starts.
void check_readable(const std::string& path);

}  // namespace kiln::cli
