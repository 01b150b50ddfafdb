// Process groups: the ranks of a distributed job and the collectives between
// them. One backend per kind of tensor: Gloo (TCP) for CPU tensors, NCCL for
// GPU tensors where kiln was built with it. The ranks meet through the
// rendezvous store (store.hpp) that rank 0 serves.
//
//   ProcessGroupOptions o = ProcessGroupOptions::from_environment();  // RANK, WORLD_SIZE, ...
//   std::unique_ptr<ProcessGroup> pg = ProcessGroup::create(rt, o);
//   pg->all_reduce(grad, ReduceOp::mean)->wait();                    // blocking
//   std::shared_ptr<Work> w = pg->all_reduce(bucket, ReduceOp::sum);  // overlapped
//   ...; w->wait();
//
// Rules, as in every collective library: every rank calls the same
// collectives in the same order with tensors of the same shape and dtype. A
// tensor handed to an operation belongs to it until its Work is done: do not
// read or write it before wait() returns. Collectives run in the order they
// were called, on a thread of the group's own; send and recv start at once
// and complete in wait().
//
// Every operation waits at most the group's timeout. When a peer dies or
// hangs the others fail with Status::peer or Status::timeout and a message
// that names the operation and the rank at fault ("all_reduce #12 (sum,
// f32[1024]): rank 3 left the job (its process ended)"); after a failure
// the group is broken and every later call fails with the first error.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "kiln/dist/store.hpp"
#include "kiln/profiler/profiler.hpp"
#include "kiln/tensor.hpp"

namespace kiln {
class Runtime;
}

namespace kiln::dist {

enum class ReduceOp { sum, mean, max, min };
const char* reduce_op_name(ReduceOp op);

// NCCL's version ("2.28.3"), or nullptr in a build without NCCL.
const char* nccl_version();

// The completion of one operation.
class Work {
 public:
  Work() = default;
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;

  // Blocks until the operation has finished; throws its error.
  void wait();
  bool done() const;

  // For the backends: mark the operation finished, with an error or not.
  void finish(std::exception_ptr error = nullptr);
  // Runs `complete` on the first wait() (send and recv finish there);
  // the operation is done when it returns or throws.
  void complete_on_wait(std::function<void()> complete);

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
  std::function<void()> complete_;
};

struct ProcessGroupOptions {
  int rank = 0;
  int world_size = 1;
  std::string master_addr = "127.0.0.1";
  uint16_t master_port = 29500;
  // Each operation, and meeting the other ranks, waits at most this long.
  Milliseconds timeout = std::chrono::minutes(10);
  // "gloo" (CPU tensors) or "nccl" (GPU tensors).
  std::string backend = "gloo";
  // Groups of different names keep apart in the store.
  std::string name = "default";

  // RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT, as `kiln launch`,
  // torchrun and SLURM-style launchers set them; a missing or malformed one
  // fails naming the variable. KILN_DIST_TIMEOUT (seconds) sets the timeout.
  static ProcessGroupOptions from_environment();
  // The same without RANK and WORLD_SIZE (the caller gives them): the
  // variables that are set replace the defaults.
  void take_environment_address();
  // True when RANK and WORLD_SIZE are set.
  static bool environment_has_job();
};

class Backend;
struct Rendezvous;

class ProcessGroup {
 public:
  // Meets the other ranks: rank 0 serves the store at master_addr:master_port,
  // every rank connects to it, then the backend connects the ranks. The
  // runtime's groups of one job share the store (and rank 0's server); a
  // group of one rank serves its own on any free port (it meets nobody).
  // While the runtime's profiler records, each collective is a span on the
  // "collectives" track, from when the group's worker starts it to when it
  // ends (on a GPU: to when it is queued); the runtime must outlive the
  // group, or call stop_tracing() before it goes.
  static std::unique_ptr<ProcessGroup> create(Runtime& rt, const ProcessGroupOptions& options);
  // Collectives are no longer traced (their runtime is going).
  void stop_tracing() { profiler_.store(nullptr); }

  // Stops the group's thread (operations still queued fail), then leaves:
  // rank 0 keeps serving the store until the other ranks have left too (or
  // a few seconds have passed), so that none loses the store mid-goodbye.
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return options_.rank; }
  int size() const { return options_.world_size; }
  const ProcessGroupOptions& options() const { return options_; }

  // In place: every rank's `t` becomes the reduction of all ranks' `t`.
  // mean divides the sum by the number of ranks (floating dtypes only).
  std::shared_ptr<Work> all_reduce(const Tensor& t, ReduceOp op);
  // Every rank's `t` becomes root's.
  std::shared_ptr<Work> broadcast(const Tensor& t, int root);
  // `output` (numel = ranks × input's) receives every rank's `input`, rank
  // r's at elements [r·n, (r+1)·n).
  std::shared_ptr<Work> all_gather(const Tensor& input, const Tensor& output);
  // `input` (numel = ranks × output's) is reduced over the ranks and rank r
  // keeps part r of the result in `output`.
  std::shared_ptr<Work> reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op);
  // Point to point; a send matches the recv of the same tag on its peer.
  std::shared_ptr<Work> send(const Tensor& t, int dst, int tag);
  std::shared_ptr<Work> recv(const Tensor& t, int src, int tag);
  // Returns once every rank has called it.
  std::shared_ptr<Work> barrier();

 private:
  class Worker;
  ProcessGroup(const ProcessGroupOptions& options, std::shared_ptr<Rendezvous> rendezvous, std::string prefix);
  void check_tensor(const Tensor& t, const char* op, const char* what) const;
  void check_peer(int peer, const char* op, const char* what) const;
  // Same dtype, and the whole (output when output_whole) has ranks x the part's elements.
  void check_parts(const Tensor& input, const Tensor& output, const char* op, bool output_whole) const;
  std::shared_ptr<Work> enqueue(std::string what, std::function<void(uint32_t seq)> run);
  std::shared_ptr<Work> start_p2p(std::string what, int peer, std::function<std::function<void()>()> start);
  // The first operation that failed broke the group: later ones fail with its error.
  std::exception_ptr first_failure() const;
  std::exception_ptr remember_failure(std::exception_ptr error);

  ProcessGroupOptions options_;
  std::shared_ptr<Rendezvous> rendezvous_;  // shared by the runtime's groups of one job
  std::shared_ptr<Store> store_;
  std::string prefix_;  // "kiln/<name>/<n>/" in the store, n counting this process's groups of that name
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Worker> worker_;
  std::atomic<const Profiler*> profiler_{nullptr};  // the runtime's; null: not traced
  std::atomic<uint32_t> next_seq_{0};  // numbers the collectives, the same on every rank
  mutable std::mutex failure_mutex_;
  std::exception_ptr failure_;
};

}  // namespace kiln::dist
