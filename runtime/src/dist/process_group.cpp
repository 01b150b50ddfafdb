// The process group: argument checks, ordering and failure reporting around
// a backend (Gloo or NCCL).
#include "kiln/dist/process_group.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include "backend.hpp"
#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "peer_blame.hpp"
#include "rendezvous.hpp"
#include "worker.hpp"

namespace kiln::dist {
namespace {

// The backend's name was checked when the group was asked for.
std::unique_ptr<Backend> make_backend(const ProcessGroupOptions& o, Store& store, const std::string& prefix) {
  return o.backend == "nccl" ? make_nccl_backend(o, store, prefix) : make_gloo_backend(o, store, prefix);
}

// Rank 0 waits this long at most for the others to leave before it stops
// serving the store.
constexpr Milliseconds kLeaveWait = std::chrono::seconds(10);

}  // namespace

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::mean: return "mean";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
  }
  return "?";
}

std::unique_ptr<ProcessGroup> ProcessGroup::create(Runtime& rt, const ProcessGroupOptions& o) {
  KILN_CHECK(o.world_size >= 1 && o.rank >= 0 && o.rank < o.world_size, Status::invalid_argument,
             "process group: rank ", o.rank, " of ", o.world_size, " ranks (ranks are 0 to world size - 1)");
  KILN_CHECK(o.timeout.count() > 0, Status::invalid_argument, "process group: the timeout must be positive, got ",
             o.timeout.count(), " ms");
  KILN_CHECK(o.backend == "gloo" || o.backend == "nccl", Status::invalid_argument, "unknown process group backend '",
             o.backend, "' (known: gloo for CPU tensors, nccl for GPU tensors)");
  const std::string where = str_cat("process group '", o.name, "' (rank ", o.rank, " of ", o.world_size, ", ",
                                    o.backend, ", store at ", o.master_addr, ":", o.master_port, ")");
  try {
    std::shared_ptr<Rendezvous> rendezvous = rt.rendezvous().meet(o);
    Store& store = *rendezvous->store;
    // A group made again under the same name meets under a new prefix.
    int64_t generation = store.add(str_cat("kiln/", o.name, "/made/", o.rank), 1);
    std::string prefix = str_cat("kiln/", o.name, "/", generation, "/");
    std::unique_ptr<ProcessGroup> group(new ProcessGroup(o, std::move(rendezvous), prefix));
    group->backend_ = make_backend(o, *group->store_, prefix);
    group->worker_ = std::make_unique<Worker>();
    group->profiler_.store(&rt.profiler());
    return group;
  } catch (const Error& e) {
    throw_error(e.status(), str_cat(where, ": ", e.what()));
  } catch (const std::exception& e) {
    throw_error(Status::peer, str_cat(where, ": ", e.what()));
  }
}

ProcessGroup::ProcessGroup(const ProcessGroupOptions& options, std::shared_ptr<Rendezvous> rendezvous,
                           std::string prefix)
    : options_(options), rendezvous_(std::move(rendezvous)), store_(rendezvous_->store), prefix_(std::move(prefix)) {}

ProcessGroup::~ProcessGroup() {
  worker_.reset();
  const bool met = backend_ != nullptr;  // false when meeting the others failed
  backend_.reset();
  if (!met) return;
  try {
    store_->set(str_cat(prefix_, "left/", rank()), "1");
    if (rendezvous_->server) {
      // Serve the store until every other rank has left or died.
      auto deadline = std::chrono::steady_clock::now() + kLeaveWait;
      for (int r = 1; r < size(); ++r) {
        while (!store_->try_get(str_cat(prefix_, "left/", r)) && std::chrono::steady_clock::now() < deadline) {
          std::vector<int> gone = store_->departed_ranks();
          if (std::find(gone.begin(), gone.end(), r) != gone.end()) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
    }
  } catch (...) {
    // Leaving is best effort: with the store gone there is nobody to tell.
  }
  store_.reset();
  rendezvous_.reset();
}

void ProcessGroup::check_tensor(const Tensor& t, const char* op, const char* what) const {
  KILN_CHECK(t.defined(), Status::invalid_argument, op, ": '", what, "' is undefined");
  KILN_CHECK(backend_->takes(t), Status::device_mismatch, op, ": the ", backend_->name(), " backend cannot move '",
             what, "', a tensor on ", to_string(t.device()),
             options_.backend == "gloo" ? " (gloo moves CPU tensors; use the nccl backend for GPU tensors)"
                                        : " (nccl moves GPU tensors; use the gloo backend for CPU tensors)");
  KILN_CHECK(t.is_contiguous(), Status::invalid_argument, op, ": '", what,
             "' must be contiguous (the collective writes into its memory)");
}

void ProcessGroup::check_peer(int peer, const char* op, const char* what) const {
  KILN_CHECK(peer >= 0 && peer < size() && peer != rank(), Status::invalid_argument, op, ": ", what, " ", peer,
             " is not another rank of the group (ranks 0 to ", size() - 1, ", this is rank ", rank(), ")");
}

std::shared_ptr<Work> ProcessGroup::enqueue(std::string what, std::function<void(uint32_t seq)> run) {
  auto work = std::make_shared<Work>();
  uint32_t seq = next_seq_++;
  worker_->push(Worker::Job{work, [this, work, what = std::move(what), run = std::move(run), seq] {
    std::exception_ptr error = first_failure();
    if (!error) {
      try {
        std::optional<ProfiledSpan> traced;
        const Profiler* profiler = profiler_.load();
        if (profiler && profiler->enabled()) traced.emplace(*profiler, "collectives", what);
        run(seq);
      } catch (const std::exception& e) {
        error = remember_failure(
            std::make_exception_ptr(blame_failure(*store_, options_, prefix_, {what, seq, std::nullopt}, e)));
      }
    }
    work->finish(error);
  }});
  return work;
}

std::shared_ptr<Work> ProcessGroup::start_p2p(std::string what, int peer,
                                              std::function<std::function<void()>()> start) {
  auto work = std::make_shared<Work>();
  if (std::exception_ptr error = first_failure()) {
    work->finish(error);
    return work;
  }
  std::function<void()> complete = start();
  work->complete_on_wait([this, what = std::move(what), peer, complete = std::move(complete)] {
    try {
      complete();
    } catch (const std::exception& e) {
      std::rethrow_exception(remember_failure(
          std::make_exception_ptr(blame_failure(*store_, options_, prefix_, {what, std::nullopt, peer}, e))));
    }
  });
  return work;
}

std::exception_ptr ProcessGroup::first_failure() const {
  std::lock_guard lock(failure_mutex_);
  return failure_;
}

std::exception_ptr ProcessGroup::remember_failure(std::exception_ptr error) {
  std::lock_guard lock(failure_mutex_);
  if (!failure_) failure_ = error;
  return failure_;
}

std::shared_ptr<Work> ProcessGroup::all_reduce(const Tensor& t, ReduceOp op) {
  check_tensor(t, "all_reduce", "tensor");
  KILN_CHECK(op != ReduceOp::mean || is_floating(t.dtype()), Status::dtype_mismatch,
             "all_reduce: mean of a ", dtype_name(t.dtype()), " tensor (only floating dtypes average; use sum)");
  return enqueue(str_cat("all_reduce (", reduce_op_name(op), ", ", describe(t), ")"),
                 [this, t, op](uint32_t seq) { backend_->all_reduce(t, op, seq); });
}

std::shared_ptr<Work> ProcessGroup::broadcast(const Tensor& t, int root) {
  check_tensor(t, "broadcast", "tensor");
  KILN_CHECK(root >= 0 && root < size(), Status::invalid_argument, "broadcast: root ", root,
             " is not a rank of the group (0 to ", size() - 1, ")");
  return enqueue(str_cat("broadcast (from rank ", root, ", ", describe(t), ")"),
                 [this, t, root](uint32_t seq) { backend_->broadcast(t, root, seq); });
}

void ProcessGroup::check_parts(const Tensor& input, const Tensor& output, const char* op, bool output_whole) const {
  check_tensor(input, op, "input");
  check_tensor(output, op, "output");
  KILN_CHECK(input.dtype() == output.dtype(), Status::dtype_mismatch, op, ": input is ", dtype_name(input.dtype()),
             " but output is ", dtype_name(output.dtype()));
  const Tensor& whole = output_whole ? output : input;
  const Tensor& part = output_whole ? input : output;
  KILN_CHECK(whole.numel() == part.numel() * size(), Status::shape_mismatch, op, ": ",
             output_whole ? "output " : "input ", describe(whole), " must have ", size(), " (ranks) x ", part.numel(),
             output_whole ? " (input's)" : " (output's)", " elements");
}

std::shared_ptr<Work> ProcessGroup::all_gather(const Tensor& input, const Tensor& output) {
  check_parts(input, output, "all_gather", true);
  return enqueue(str_cat("all_gather (", describe(input), ")"),
                 [this, input, output](uint32_t seq) { backend_->all_gather(input, output, seq); });
}

std::shared_ptr<Work> ProcessGroup::reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op) {
  check_parts(input, output, "reduce_scatter", false);
  KILN_CHECK(op != ReduceOp::mean || is_floating(input.dtype()), Status::dtype_mismatch,
             "reduce_scatter: mean of a ", dtype_name(input.dtype()), " tensor (only floating dtypes average)");
  return enqueue(str_cat("reduce_scatter (", reduce_op_name(op), ", ", describe(input), ")"),
                 [this, input, output, op](uint32_t seq) { backend_->reduce_scatter(input, output, op, seq); });
}

std::shared_ptr<Work> ProcessGroup::barrier() {
  return enqueue("barrier", [this](uint32_t seq) { backend_->barrier(seq); });
}

std::shared_ptr<Work> ProcessGroup::send(const Tensor& t, int dst, int tag) {
  check_tensor(t, "send", "tensor");
  check_peer(dst, "send", "destination");
  KILN_CHECK(tag >= 0, Status::invalid_argument, "send: the tag must be >= 0, got ", tag);
  return start_p2p(str_cat("send (", describe(t), " to rank ", dst, ", tag ", tag, ")"), dst,
                   [&] { return backend_->start_send(t, dst, tag); });
}

std::shared_ptr<Work> ProcessGroup::recv(const Tensor& t, int src, int tag) {
  check_tensor(t, "recv", "tensor");
  check_peer(src, "recv", "source");
  KILN_CHECK(tag >= 0, Status::invalid_argument, "recv: the tag must be >= 0, got ", tag);
  return start_p2p(str_cat("recv (", describe(t), " from rank ", src, ", tag ", tag, ")"), src,
                   [&] { return backend_->start_recv(t, src, tag); });
}

}  // namespace kiln::dist
