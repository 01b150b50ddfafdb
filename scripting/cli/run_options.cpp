// Reading "[options] script.lua [args...]" for kiln run and kiln launch.
#include "run_options.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace kiln::cli {

bool OptionReader::is(std::string_view name) const {
  const std::string_view arg = current();
  return arg.starts_with(name) && (arg.size() == name.size() || arg[name.size()] == '=');
}

std::string_view OptionReader::value(std::string_view name) {
  const std::string_view arg = current();
  if (arg.size() > name.size()) return arg.substr(name.size() + 1);
  if (i_ + 1 == args_.size()) throw UsageError{std::string(name) + " needs a value"};
  return args_[++i_];
}

bool RunOptions::read(OptionReader& reader) {
  if (reader.current() == "--sandbox") {
    sandbox = true;
  } else if (reader.current() == "--report") {
    report = true;
  } else if (reader.current() == "--direct-conv") {
    direct_convolutions = true;
  } else if (reader.is("--threads")) {
    threads = parse_whole_number("--threads", reader.value("--threads"), 0);
  } else if (reader.is("--seed")) {
    seed = parse_whole_number<uint64_t>("--seed", reader.value("--seed"), 0);
  } else {
    return false;
  }
  return true;
}

std::vector<std::string> RunOptions::arguments() const {
  std::vector<std::string> args;
  if (threads != 0) args.push_back("--threads=" + std::to_string(threads));
  if (seed != 0) args.push_back("--seed=" + std::to_string(seed));
  if (sandbox) args.emplace_back("--sandbox");
  if (report) args.emplace_back("--report");
  if (direct_convolutions) args.emplace_back("--direct-conv");
  return args;
}

ScriptCommandLine ScriptCommandLine::parse(Args args, const std::function<bool(OptionReader&)>& read_option) {
  ScriptCommandLine line;
  OptionReader reader(args);
  for (; !reader.at_end(); reader.advance()) {
    const std::string_view arg = reader.current();
    if (arg == "--") {
      reader.advance();
      break;
    }
    if (arg.empty() || arg.front() != '-') break;
    if (arg == "--help" || arg == "-h") {
      line.help = true;
      return line;
    }
    if (!line.run.read(reader) && !(read_option && read_option(reader)))
      throw UsageError{"unknown option '" + std::string(arg) + "'"};
  }
  const Args rest = reader.remaining();
  if (rest.empty()) throw UsageError{"missing the script to run"};
  line.script = rest.front();
  line.script_args.assign(rest.begin() + 1, rest.end());
  return line;
}

void check_readable(const std::string& path) {
  const std::unique_ptr<std::FILE, decltype(&std::fclose)> file(std::fopen(path.c_str(), "r"), &std::fclose);
  if (!file) throw UsageError{"cannot open the script '" + path + "': " + std::strerror(errno)};
}

}  // namespace kiln::cli
