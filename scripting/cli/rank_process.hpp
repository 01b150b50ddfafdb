// Starting one rank of `kiln launch` and learning how it ended.
//
// A rank is a child process in a process group of its own (its id is the
// rank's pid), so that the launcher can signal the rank together with what
// the rank starts (a shell of os.execute, a data loader's helper), and so
// that a Ctrl-C at the terminal reaches the launcher alone, which forwards
// it. Its standard input is /dev/null; its standard output and error are
// pipes that the launcher reads. It gets SIGKILL if the launcher dies
// without stopping it (PR_SET_PDEATHSIG).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace kiln::cli {

struct RankProcess {
  pid_t pid = -1;
  int stdout_fd = -1;  // the read ends of the rank's pipes; the caller closes them
  int stderr_fd = -1;
};

// Runs `program` with `argv` and exactly `env` ("NAME=value" each) as a
// rank. Throws std::system_error when the pipes or the process cannot be made;
// a program that cannot be executed writes why on its stderr and exits with 127.
RankProcess spawn_rank(const std::string& program, const std::vector<std::string>& argv,
                       const std::vector<std::string>& env);

// How a rank ended.
struct RankExit {
  bool signaled = false;  // killed by signal `code`, or exited with status `code`
  int code = 0;

  bool ok() const { return !signaled && code == 0; }
  // What the launcher exits with for it: the status, or 128 + the signal.
  int exit_code() const { return signaled ? 128 + code : code; }
  // "exited with status 3", "was killed by signal 9 (Killed)".
  std::string describe() const;
};

// How the rank `pid` ended, once it has, or nothing while it runs; never
// blocks. Once it has ended, what it left running in its process group is
// killed (SIGKILL) before the rank is reaped: while the rank is not reaped,
// its pid, the group's id, cannot be given to another process.
std::optional<RankExit> reap_if_ended(pid_t pid);

// Sends `signal` to the rank's process group (nothing if it is gone).
void signal_rank(pid_t pid, int signal);

}  // namespace kiln::cli
