// The launcher's event loop.
//
// Boost.Asio rather than a poll() loop: its signal_set turns SIGCHLD, SIGINT
// and SIGTERM into ordinary completions (it keeps the self-pipe a poll()
// loop would have to write), each pipe is read by its own async_read_some
// into its own buffer, and the grace period is a steady_timer. Everything
// runs on this thread in one io_context, so nothing needs a lock and each
// line is written whole before the next one. It is also the library that
// serves kiln's rendezvous store.
#include "rank_supervisor.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstring>
#include <memory>
#include <system_error>

#include "line_prefixer.hpp"
#include "rank_process.hpp"

namespace kiln::cli {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// All of `text` to `fd`, with write(2) rather than stdio: Asio's signal
// handlers are installed without SA_RESTART, so a SIGCHLD interrupts a
// write to a full pipe (EINTR), and stdio would drop the rest of the line.
// A stdout left non-blocking by whoever started kiln (EAGAIN) is waited for.
void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n >= 0) {
      text.remove_prefix(size_t(n));
    } else if (errno == EAGAIN) {
      pollfd writable{fd, POLLOUT, 0};
      ::poll(&writable, 1, -1);
    } else if (errno != EINTR) {
      return;  // EPIPE, EBADF: nothing reads this output any more
    }
  }
}

// "kiln launch: <message>" on stderr.
void say(const std::string& message) { write_all(STDERR_FILENO, "kiln launch: " + message + "\n"); }

class Supervisor {
 public:
  explicit Supervisor(std::chrono::milliseconds stop_grace)
      : stop_grace_(stop_grace), signals_(io_, SIGCHLD, SIGINT, SIGTERM), grace_timer_(io_) {}

  int run(const std::vector<RankLaunch>& launches) {
    // Waiting before the first fork, so that no SIGCHLD is missed.
    wait_for_signal();
    for (const RankLaunch& launch : launches) {
      try {
        start(launch);
      } catch (const std::exception& e) {  // std::system_error, boost::system::system_error
        say("cannot start rank " + std::to_string(launch.rank) + ": " + e.what());
        fail(1);
        break;
      }
    }
    finish_if_done();
    io_.run();
    if (failure_ != 0) return failure_;
    return interrupt_ != 0 ? 128 + interrupt_ : 0;
  }

 private:
  struct Rank {
    int rank;
    pid_t pid;
    bool running = true;
  };
  // One of a rank's two output pipes, and where its lines go.
  struct Output {
    Output(asio::io_context& io, int fd, int rank, int to)
        : pipe(io, fd), lines("[rank " + std::to_string(rank) + "] "), to(to) {}
    asio::posix::stream_descriptor pipe;
    LinePrefixer lines;
    int to;  // STDOUT_FILENO or STDERR_FILENO
    std::array<char, 1 << 16> buffer;
  };

  void start(const RankLaunch& launch) {
    const RankProcess process = spawn_rank(launch.program, launch.argv, launch.env);
    ranks_.push_back(Rank{launch.rank, process.pid});
    for (const auto& [fd, to] :
         {std::pair{process.stdout_fd, STDOUT_FILENO}, std::pair{process.stderr_fd, STDERR_FILENO}}) {
      outputs_.push_back(std::make_unique<Output>(io_, fd, launch.rank, to));
      read(*outputs_.back());
    }
  }

  bool done() const {
    for (const Rank& r : ranks_)
      if (r.running) return false;
    return open_outputs_ == 0;
  }

  // Lets io_.run() return once every rank has ended and said all it had to.
  void finish_if_done() {
    if (!done()) return;
    signals_.cancel();
    grace_timer_.cancel();
  }

  void read(Output& out) {
    ++open_outputs_;
    read_more(out);
  }

  void read_more(Output& out) {
    out.pipe.async_read_some(asio::buffer(out.buffer), [this, &out](const error_code& ec, size_t n) {
      write_all(out.to, out.lines.feed({out.buffer.data(), n}));
      if (!ec) return read_more(out);
      // End of file (or a broken pipe): the rank and all it started have closed it.
      write_all(out.to, out.lines.finish());
      out.pipe.close();
      --open_outputs_;
      finish_if_done();
    });
  }

  void wait_for_signal() {
    signals_.async_wait([this](const error_code& ec, int signal) {
      if (ec) return;  // cancelled: all is done
      if (signal == SIGCHLD) {
        reap();
      } else {
        if (interrupt_ == 0) interrupt_ = signal;
        say("received signal " + std::to_string(signal) + " (" + ::strsignal(signal) + "): passing it on to the ranks");
        stop(signal);
      }
      if (!done()) wait_for_signal();
    });
  }

  // SIGCHLD says that one rank or more has ended (signals merge).
  void reap() {
    for (Rank& r : ranks_) {
      if (!r.running) continue;
      const std::optional<RankExit> exit = reap_if_ended(r.pid);
      if (!exit) continue;
      r.running = false;
      // Ends after a stop are its consequence, not news.
      if (exit->ok() || stopping_) continue;
      say("rank " + std::to_string(r.rank) + " " + exit->describe());
      fail(exit->exit_code());
    }
    finish_if_done();
  }

  void fail(int exit_code) {
    if (failure_ == 0) failure_ = exit_code;
    stop(SIGTERM);
  }

  // Sends `signal` to the running ranks; the first stop also sets the
  // deadline after which those still running get SIGKILL.
  void stop(int signal) {
    for (const Rank& r : ranks_)
      if (r.running) signal_rank(r.pid, signal);
    if (std::exchange(stopping_, true)) return;
    grace_timer_.expires_after(stop_grace_);
    grace_timer_.async_wait([this](const error_code& ec) {
      if (ec) return;
      for (const Rank& r : ranks_)
        if (r.running) signal_rank(r.pid, SIGKILL);
    });
  }

  std::chrono::milliseconds stop_grace_;
  asio::io_context io_;
  asio::signal_set signals_;
  asio::steady_timer grace_timer_;
  std::vector<Rank> ranks_;
  std::vector<std::unique_ptr<Output>> outputs_;  // stable addresses: handlers hold references
  size_t open_outputs_ = 0;
  bool stopping_ = false;
  int failure_ = 0;    // the exit code of the first failure, 0 while none
  int interrupt_ = 0;  // the first SIGINT or SIGTERM received, 0 while none
};

}  // namespace

int supervise_ranks(const std::vector<RankLaunch>& ranks, std::chrono::milliseconds stop_grace) {
  return Supervisor(stop_grace).run(ranks);
}

}  // namespace kiln::cli
