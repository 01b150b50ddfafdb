// fork and exec of a rank, and waitid without reaping so that its process
// group can still be signalled safely once it has ended.
#include "rank_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <system_error>
#include <utility>

namespace kiln::cli {
namespace {

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

// A file descriptor closed when it goes out of scope, unless released.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read, write;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_errno("cannot create a pipe");
  return Pipe{Fd(fds[0]), Fd(fds[1])};
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// In the child, between fork and exec: async-signal-safe calls only (the
// launcher may have threads). All signals are blocked on entry.
[[noreturn]] void exec_rank(const char* program, char* const argv[], char* const envp[], pid_t launcher, int stdin_fd,
                            int stdout_fd, int stderr_fd) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != launcher) ::_exit(127);  // the launcher died before prctl
  // The launcher's handlers (Asio's) and ignored signals are not the rank's.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) ::sigaction(s, &default_action, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // dup2 clears O_CLOEXEC on the new descriptors; every other one closes on exec.
  if (::dup2(stdin_fd, 0) < 0 || ::dup2(stdout_fd, 1) < 0 || ::dup2(stderr_fd, 2) < 0) ::_exit(127);
  ::execve(program, argv, envp);
  constexpr char kMessage[] = "kiln launch: cannot execute the kiln executable\n";
  [[maybe_unused]] const ssize_t ignored = ::write(2, kMessage, sizeof kMessage - 1);
  ::_exit(127);
}

}  // namespace

RankProcess spawn_rank(const std::string& program, const std::vector<std::string>& argv,
                       const std::vector<std::string>& env) {
  Pipe out = make_pipe();
  Pipe err = make_pipe();
  const Fd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (null.get() < 0) throw_errno("cannot open /dev/null");
  const std::vector<char*> c_argv = c_strings(argv);
  const std::vector<char*> c_env = c_strings(env);
  const pid_t launcher = ::getpid();

  // Blocked across fork, so that no handler of the launcher runs in the child.
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = ::fork();
  if (pid == 0)
    exec_rank(program.c_str(), c_argv.data(), c_env.data(), launcher, null.get(), out.write.get(), err.write.get());
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) {
    errno = fork_errno;
    throw_errno("cannot start a process");
  }
  // Also from this side, so that the group exists before the launcher may
  // signal it (the child may not have run yet). Fails harmlessly once the
  // child has exec'd, by which time it has made the group itself.
  ::setpgid(pid, pid);
  return RankProcess{pid, out.read.release(), err.read.release()};
}

std::string RankExit::describe() const {
  if (!signaled) return "exited with status " + std::to_string(code);
  const char* name = ::strsignal(code);
  return "was killed by signal " + std::to_string(code) + " (" + (name ? name : "unknown") + ")";
}

std::optional<RankExit> reap_if_ended(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return std::nullopt;
  ::kill(-pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (info.si_code == CLD_EXITED) return RankExit{false, info.si_status};
  return RankExit{true, info.si_status};  // CLD_KILLED or CLD_DUMPED
}

void signal_rank(pid_t pid, int signal) { ::kill(-pid, signal); }

}  // namespace kiln::cli
