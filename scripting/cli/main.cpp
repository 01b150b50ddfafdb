// kiln: runs training scripts and says what this installation has.
//
//   kiln run [options] script.lua [args...]
//   kiln launch --nproc-per-node N|gpu [options] script.lua [args...]
//   kiln plugin-check [--device D] lib.so
//   kiln ops [NAME]
//   kiln plugins | kiln info | kiln version | kiln --help
#include <array>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "command.hpp"
#include "openmp_spin.hpp"

namespace kiln::cli {
namespace {

constexpr const char* kProgramUsage =
    "usage: kiln <command> [arguments]\n"
    "       kiln <command> --help\n";

constexpr std::array kCommands = {
    Command{"run", "run a Lua training script",
            "usage: kiln run [options] script.lua [args...]\n"
            "\n"
            "Runs the script with the kiln module (local kiln = require(\"kiln\")).\n"
            "The arguments after the script are Lua's `arg` (arg[0] is the script)\n"
            "and the chunk's `...`. A script error prints its message and traceback\n"
            "and exits with 1.\n"
            "\n"
            "options (before the script):\n"
            "  --threads N   CPU threads of the runtime (0, the default: KILN_NUM_THREADS, else one\n"
            "                per hardware thread)\n"
            "  --seed N      initial seed of the runtime's random stream (default 0)\n"
            "  --direct-conv f32 convolutions on the CPU use direct kernels only, never\n"
            "                Winograd's algorithm (which 3x3 and 5x5 stride-1 ones use where it is\n"
            "                faster; errors up to about 1e-5 of the largest value)\n"
            "  --sandbox     run as an untrusted script: no os, io, debug, files or bytecode\n"
            "  --report      print the training report (step time split, throughput, utilisation,\n"
            "                memory, advice) on stderr at the end of every kiln.fit of the script\n"
            "  --profile     profile every op call of the script and print the table (op, phase,\n"
            "                calls, total, self and mean time) on stderr at the end\n"
            "  --trace FILE  profile every op call and write a Chrome trace (JSON) to FILE at the\n"
            "                end, for Perfetto or chrome://tracing\n"
            "  --            ends the options (for a script whose name starts with '-')\n",
            run_command},
    Command{"launch", "run a script as several ranks (distributed training)",
            "usage: kiln launch --nproc-per-node N|gpu [--nnodes M --node-rank R\n"
            "                   --master-addr A --master-port P] [--stop-grace SECONDS]\n"
            "                   [run options] script.lua [args...]\n"
            "       kiln launch ... --no-lua program [args...]\n"
            "\n"
            "Starts N ranks on this node, each running `kiln run [run options] script.lua\n"
            "[args...]` with this kiln executable and these variables added to the\n"
            "environment: RANK (node rank x N + local rank), WORLD_SIZE (M x N),\n"
            "LOCAL_RANK, LOCAL_WORLD_SIZE (N), MASTER_ADDR, MASTER_PORT,\n"
            "KILN_NUM_THREADS and, unless it is set already, OMP_NUM_THREADS (the same\n"
            "share, for oneDNN's OpenMP pool). With several nodes, run it once on each.\n"
            "\n"
            "Each line a rank writes goes to the same stream with \"[rank R] \" before it.\n"
            "Ranks read their standard input from /dev/null and run in process groups of\n"
            "their own; what a rank leaves running in its group is killed when it ends.\n"
            "When a rank fails, kiln launch says which and how, sends SIGTERM to the other\n"
            "ranks, then SIGKILL to those still running after the grace period, and exits\n"
            "with the rank's exit status (128 + k for a rank killed by signal k). SIGINT\n"
            "and SIGTERM sent to kiln launch are passed on to the ranks the same way; it\n"
            "then exits with 128 + the signal. It exits with 0 when every rank exits with 0.\n"
            "\n"
            "options (before the script):\n"
            "  --nproc-per-node N|gpu  ranks on this node: N, or gpu for one per visible GPU\n"
            "  --nnodes M              nodes taking part (default 1)\n"
            "  --node-rank R           this node's index, in [0, M) (default 0)\n"
            "  --master-addr A         rank 0's host, where ranks meet (default 127.0.0.1)\n"
            "  --master-port P         its port (default: with one node, a free port of A;\n"
            "                          with more, 29500)\n"
            "  --stop-grace SECONDS    time stopped ranks get before SIGKILL (default 5)\n"
            "  --no-lua                run `program [args...]` as each rank instead of a\n"
            "                          Lua script (a C host, a benchmark); no run options\n"
            "  --                      ends the options\n"
            "\n"
            "run options (checked, then given to each kiln run; see kiln run --help):\n"
            "  --threads N   CPU threads of each rank's runtime (default: this node's cores\n"
            "                divided among its ranks, at least 1, given to every rank as\n"
            "                KILN_NUM_THREADS, which kiln runtimes take by default)\n"
            "  --seed N      initial seed of each rank's random stream\n"
            "  --direct-conv f32 convolutions on the CPU use direct kernels only\n"
            "  --sandbox     run the script as untrusted (without os, it cannot read RANK)\n"
            "  --report      rank 0 prints the training report at the end of every kiln.fit\n",
            launch_command},
    Command{"plugins", "list the plugins found and what each registers",
            "usage: kiln plugins\n"
            "\n"
            "Lists every plugin a runtime loads by default (from KILN_PLUGIN_PATH and the\n"
            "install's plugin folder): its name, version, file, and the layers, optimizers,\n"
            "schedules, data sources, transforms, strategies and ops it registers.\n",
            plugins_command},
    Command{"ops", "list the ops, with their inputs and attributes",
            "usage: kiln ops [NAME]\n"
            "\n"
            "Lists every op a runtime has by default: the built-in ones and those of the\n"
            "plugins it loads (from KILN_PLUGIN_PATH and the install's plugin folder, as\n"
            "kiln run loads them), in name order. For each: who provides it, its inputs\n"
            "(optional ones, and one taking any number of tensors, are marked), its\n"
            "attributes with their types and defaults, whether gradients flow through it,\n"
            "and the dtypes it has kernels for on each device.\n"
            "With NAME, only that op; an unknown name exits with 1 and names the closest.\n",
            ops_command},
    Command{"plugin-check", "check that a plugin library conforms",
            "usage: kiln plugin-check [--device cpu|cuda:N] lib.so\n"
            "\n"
            "Loads the plugin alone and checks, one line per check: that it exports\n"
            "kiln_plugin_entry alone; for each op, its backward against central finite\n"
            "differences in f64 (called with 1 to 3 inputs of shape 2x4 and no attributes);\n"
            "for each layer type (built with its defaults, required entries set to 4, {4},\n"
            "0.5 or false, and fed an input of shape 2x4, 2x4x4 or 2x4x4x4), a weights\n"
            "save/load round trip and its gradients against finite differences; and both\n"
            "on a GPU against the CPU. What cannot be built or called is reported skipped\n"
            "with the reason. Exits with 0 when every check passes, 1 when one fails, and\n"
            "2 when the library is not a plugin.\n"
            "\n"
            "options:\n"
            "  --device D   cpu (no GPU comparison) or cuda:N (default: cuda:0 when found)\n",
            plugin_check_command},
    Command{"info", "show the version, build options, devices and libraries",
            "usage: kiln info\n"
            "\n"
            "Prints kiln's version, how it was built, the devices found (and why a GPU is\n"
            "not used when none is) and the versions of oneDNN, CUDA, cuBLAS, cuDNN and NCCL.\n",
            info_command},
    Command{"version", "print kiln's version", "usage: kiln version\n", version_command},
};

void print_program_help(std::FILE* out) {
  std::fprintf(out, "%s\ncommands:\n", kProgramUsage);
  for (const Command& c : kCommands) std::fprintf(out, "  %-13s %s\n", c.name, c.summary);
}

bool is_help(std::string_view arg) { return arg == "--help" || arg == "-h"; }

int dispatch(Args args) {
  if (args.empty()) {
    std::fputs("kiln: missing the command\n\n", stderr);
    print_program_help(stderr);
    return kExitUsage;
  }
  if (is_help(args.front()) || args.front() == "help") {
    print_program_help(stdout);
    return kExitOk;
  }
  for (const Command& command : kCommands) {
    if (args.front() != command.name) continue;
    const Args rest = args.subspan(1);
    if (!rest.empty() && is_help(rest.front())) {
      std::fputs(command.usage, stdout);
      return kExitOk;
    }
    return command.run(command, rest);
  }
  std::fprintf(stderr, "kiln: unknown command '%.*s'\n\n", int(args.front().size()), args.front().data());
  print_program_help(stderr);
  return kExitUsage;
}

}  // namespace
}  // namespace kiln::cli

int main(int argc, char** argv) {
  kiln::cli::shorten_openmp_spin(argv);
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  return kiln::cli::dispatch(args);
}
