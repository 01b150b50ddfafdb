// kiln launch --nproc-per-node N|gpu [--nnodes M --node-rank R
//             --master-addr A --master-port P] [--stop-grace S]
//             [run options] script.lua [args...]
// kiln launch ... --no-lua program [args...]
//
// Reads and checks the command line, then hands one `kiln run` per local
// rank to the supervisor, with the environment torchrun gives.
#include <unistd.h>  // environ

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "command.hpp"
#include "free_port.hpp"
#include "rank_supervisor.hpp"
#include "run_options.hpp"

namespace kiln::cli {
namespace {

constexpr int kMaxRanksPerNode = 1024;               // two pipes each, in one process
constexpr int kOnePerGpu = -1;                       // --nproc-per-node gpu
constexpr uint16_t kDefaultPortOfManyNodes = 29500;  // torchrun's: every node must agree without talking
constexpr double kMaxStopGraceSeconds = 86400;

struct LaunchOptions {
  int nproc = 0;  // 0 while not given, or kOnePerGpu
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  uint16_t master_port = 0;  // 0: chosen (see kiln launch --help)
  std::chrono::milliseconds stop_grace{5000};
  bool no_lua = false;  // the "script" is a program run as it is

  // Reads the option at `reader.current()` when it is one of kiln launch's.
  bool read(OptionReader& reader);
};

int parse_nproc(std::string_view text) {
  if (text == "gpu") return kOnePerGpu;
  if (const std::optional<int> n = to_whole_number(text, 1, kMaxRanksPerNode)) return *n;
  throw UsageError{"--nproc-per-node expects a whole number in [1, " + std::to_string(kMaxRanksPerNode) +
                   "] or gpu, got '" + std::string(text) + "'"};
}

std::chrono::milliseconds parse_seconds(std::string_view option, std::string_view text) {
  double seconds = 0;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (err != std::errc() || end != text.data() + text.size() || !(seconds >= 0 && seconds <= kMaxStopGraceSeconds))
    throw UsageError{std::string(option) + " expects a number of seconds in [0, " +
                     std::to_string(int(kMaxStopGraceSeconds)) + "], got '" + std::string(text) + "'"};
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

bool LaunchOptions::read(OptionReader& reader) {
  if (reader.is("--nproc-per-node")) {
    nproc = parse_nproc(reader.value("--nproc-per-node"));
  } else if (reader.is("--nnodes")) {
    nnodes = parse_whole_number("--nnodes", reader.value("--nnodes"), 1);
  } else if (reader.is("--node-rank")) {
    node_rank = parse_whole_number("--node-rank", reader.value("--node-rank"), 0);
  } else if (reader.is("--master-addr")) {
    master_addr = reader.value("--master-addr");
    if (master_addr.empty()) throw UsageError{"--master-addr expects a host name or an address, got ''"};
  } else if (reader.is("--master-port")) {
    master_port = uint16_t(parse_whole_number("--master-port", reader.value("--master-port"), 1, 65535));
  } else if (reader.is("--stop-grace")) {
    stop_grace = parse_seconds("--stop-grace", reader.value("--stop-grace"));
  } else if (reader.current() == "--no-lua") {
    no_lua = true;
  } else {
    return false;
  }
  return true;
}

// What depends on more than one option.
void check(const LaunchOptions& options) {
  if (options.nproc == 0) throw UsageError{"missing --nproc-per-node (the number of ranks on this node, or gpu)"};
  if (options.node_rank >= options.nnodes)
    throw UsageError{"--node-rank expects a whole number in [0, " + std::to_string(options.nnodes) + ") for --nnodes " +
                     std::to_string(options.nnodes) + ", got '" + std::to_string(options.node_rank) + "'"};
  if (options.nproc > 0 && int64_t(options.nnodes) * options.nproc > std::numeric_limits<int>::max())
    throw UsageError{"--nnodes " + std::to_string(options.nnodes) + " times --nproc-per-node " +
                     std::to_string(options.nproc) + " ranks is more than a world can hold"};
}

// A program run as it is takes none of kiln run's options, and must be a
// file this process may execute (a path: no search of PATH).
void check_executable(const std::string& program, const RunOptions& run) {
  if (!run.arguments().empty())
    throw UsageError{"--no-lua runs a program, which takes no run options (--threads, --seed, --direct-conv, "
                     "--sandbox, --report)"};
  if (::access(program.c_str(), X_OK) != 0)
    throw UsageError{"--no-lua: cannot execute '" + program + "': " + std::strerror(errno)};
}

// One rank per GPU that kiln finds (as `kiln info` lists them); 0 after
// saying why there is none.
int count_gpus(const Command& self) {
  const RuntimePtr rt = open_runtime(self, nullptr);
  if (!rt) return 0;
  int count = 0;
  const char* reason = nullptr;
  if (kiln_devices_get(rt.get(), &count, &reason) != KILN_OK) {
    library_failure(self, "cannot list the devices");
    return 0;
  }
  if (count == 0) std::fprintf(stderr, "kiln launch: --nproc-per-node gpu: no GPU is visible: %s\n", reason);
  return count;
}

// The launcher's environment with the rendezvous variables set (replacing
// any inherited ones).
std::vector<std::string> rank_environment(const std::vector<std::pair<std::string, std::string>>& set) {
  const auto is_set = [&](std::string_view entry) {
    return std::any_of(set.begin(), set.end(), [&](const auto& variable) {
      const std::string& name = variable.first;
      return entry.starts_with(name) && entry.size() > name.size() && entry[name.size()] == '=';
    });
  };
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (!is_set(*e)) env.emplace_back(*e);
  for (const auto& [name, value] : set) env.push_back(name + "=" + value);
  return env;
}

// The ranks share this node's cores: unless --threads says otherwise, each
// rank's runtimes take their share (KILN_NUM_THREADS) instead of one thread
// per core, which would make N ranks fight over every core.
int rank_threads(const RunOptions& run, int nproc) {
  if (run.threads > 0) return run.threads;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return std::max(1, int(cores > 0 ? cores : 1) / nproc);
}

std::vector<RankLaunch> plan_ranks(const LaunchOptions& options, const ScriptCommandLine& line) {
  std::vector<std::string> argv;
  if (options.no_lua) {
    argv.push_back(line.script);
  } else {
    argv = {"kiln", "run"};
    const std::vector<std::string> run_options = line.run.arguments();
    argv.insert(argv.end(), run_options.begin(), run_options.end());
    argv.emplace_back("--");
    argv.push_back(line.script);
  }
  argv.insert(argv.end(), line.script_args.begin(), line.script_args.end());
  // kiln's own executable, even if its file was replaced since; or the program.
  const std::string program = options.no_lua ? line.script : "/proc/self/exe";

  const std::string threads = std::to_string(rank_threads(line.run, options.nproc));
  std::vector<RankLaunch> ranks;
  for (int local = 0; local < options.nproc; ++local) {
    const int rank = options.node_rank * options.nproc + local;
    std::vector<std::pair<std::string, std::string>> vars = {
        {"RANK", std::to_string(rank)},        {"WORLD_SIZE", std::to_string(options.nnodes * options.nproc)},
        {"LOCAL_RANK", std::to_string(local)}, {"LOCAL_WORLD_SIZE", std::to_string(options.nproc)},
        {"MASTER_ADDR", options.master_addr},  {"MASTER_PORT", std::to_string(options.master_port)},
        {"KILN_NUM_THREADS", threads},
    };
    // oneDNN runs its primitives on an OpenMP pool of one thread per core,
    // whatever the runtime's own thread count: N ranks would each start one
    // and spin on every core. The same share bounds it, unless the user set
    // OMP_NUM_THREADS, as torchrun does.
    if (std::getenv("OMP_NUM_THREADS") == nullptr) vars.emplace_back("OMP_NUM_THREADS", threads);
    ranks.push_back(RankLaunch{rank, program, argv, rank_environment(vars)});
  }
  return ranks;
}

}  // namespace

int launch_command(const Command& self, Args args) {
  LaunchOptions options;
  ScriptCommandLine line;
  try {
    line = ScriptCommandLine::parse(args, [&](OptionReader& reader) { return options.read(reader); });
    if (line.help) {
      std::fputs(self.usage, stdout);
      return kExitOk;
    }
    check(options);
    if (options.no_lua) {
      check_executable(line.script, line.run);
    } else {
      check_readable(line.script);
    }
    if (options.master_port == 0 && options.nnodes > 1) options.master_port = kDefaultPortOfManyNodes;
    if (options.master_port == 0) {
      try {
        options.master_port = find_free_port(options.master_addr);
      } catch (const std::exception& e) {
        throw UsageError{"--master-addr '" + options.master_addr + "': cannot bind a port on it: " + e.what()};
      }
    }
  } catch (const UsageError& e) {
    return usage_error(self, e.message);
  }
  if (options.nproc == kOnePerGpu) {
    options.nproc = count_gpus(self);
    if (options.nproc == 0) return kExitFailure;
  }
  return supervise_ranks(plan_ranks(options, line), options.stop_grace);
}

}  // namespace kiln::cli
