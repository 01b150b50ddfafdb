// The NCCL backend: GPU tensors between GPUs. Each rank drives one GPU, the
// one LOCAL_RANK names (modulo the GPUs visible; rank otherwise), and the
// group's communicator is created non-blocking so that it can be watched:
// every operation runs on a stream of the group's own, ordered after the
// compute stream's work queued so far, and the group's thread waits for it
// by polling its event and NCCL's asynchronous error until the timeout. On
// an error or a timeout the communicator is aborted (NCCL's way out of a
// collective whose peer is gone) and the operation fails; the group is then
// broken, as every group after a failure.
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "../../kernels/cuda/stream.hpp"
#include "../../memory/cuda/cuda_error.hpp"
#include "../../memory/cuda/device_guard.hpp"
#include "../backend.hpp"
#include "kiln/error.hpp"

namespace kiln::dist {
namespace {

using Clock = std::chrono::steady_clock;

void check_nccl(ncclResult_t r, const std::string& what) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  throw_error(r == ncclRemoteError || r == ncclSystemError ? Status::peer : Status::internal,
              str_cat(what, ": NCCL ", ncclGetErrorString(r), " (", ncclGetLastError(nullptr), ")"));
}

ncclDataType_t nccl_type(DType d) {
  switch (d) {
    case DType::f32: return ncclFloat32;
    case DType::f64: return ncclFloat64;
    case DType::f16: return ncclFloat16;
    case DType::bf16: return ncclBfloat16;
    case DType::i32: return ncclInt32;
    case DType::i64: return ncclInt64;
    case DType::u8:
    case DType::boolean: return ncclUint8;
  }
  return ncclUint8;
}

// Bools reduce as logical or (sum, max) and and (min), as on the CPU.
ncclRedOp_t nccl_op(ReduceOp op, DType d) {
  if (d == DType::boolean) return op == ReduceOp::min ? ncclMin : ncclMax;
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::mean: return ncclAvg;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::min: return ncclMin;
  }
  return ncclSum;
}

int device_for(const ProcessGroupOptions& o) {
  int count = 0;
  KILN_CUDA_CHECK(cudaGetDeviceCount(&count), "nccl: counting the GPUs");
  KILN_CHECK(count > 0, Status::device_mismatch, "nccl: no GPU is visible to rank ", o.rank);
  const char* local = std::getenv("LOCAL_RANK");
  const int index = local && *local ? std::atoi(local) : o.rank;
  return index % count;
}

class NcclBackend final : public Backend {
 public:
  NcclBackend(const ProcessGroupOptions& options, Store& store, const std::string& prefix)
      : options_(options), device_(device_for(options)) {
    CudaDeviceGuard guard(device_);
    ncclUniqueId id;
    const std::string key = prefix + "nccl/unique_id";
    if (options.rank == 0) {
      check_nccl(ncclGetUniqueId(&id), "nccl: making the unique id");
      store.set(key, std::string(reinterpret_cast<const char*>(&id), sizeof id));
    } else {
      const std::string bytes = store.get(key);
      KILN_CHECK(bytes.size() == sizeof id, Status::peer, "nccl: the unique id in the store has ", bytes.size(),
                 " bytes, expected ", sizeof id);
      std::memcpy(&id, bytes.data(), sizeof id);
    }
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // so that a peer that never arrives can be waited for with a timeout
    check_nccl(ncclCommInitRankConfig(&comm_, options.world_size, id, options.rank, &config),
               "nccl: creating the communicator");
    wait_comm_ready("nccl: creating the communicator");
    KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "nccl: creating its stream");
    KILN_CUDA_CHECK(cudaEventCreateWithFlags(&compute_done_, cudaEventDisableTiming), "nccl: creating an event");
    KILN_CUDA_CHECK(cudaEventCreateWithFlags(&op_done_, cudaEventDisableTiming), "nccl: creating an event");
    KILN_CUDA_CHECK(cudaMalloc(&barrier_word_, sizeof(float)), "nccl: the barrier's word");
  }

  ~NcclBackend() override {
    on_device_without_throwing(device_, [&] {
      if (comm_) ncclCommDestroy(comm_);
      cudaFree(barrier_word_);
      cudaEventDestroy(compute_done_);
      cudaEventDestroy(op_done_);
      cudaStreamDestroy(stream_);
    });
  }

  bool takes(const Tensor& t) const override { return t.device().is_cuda() && t.device().index == device_; }
  const char* name() const override { return "nccl"; }

  void all_reduce(const Tensor& t, ReduceOp op, uint32_t) override {
    run("all_reduce", [&] {
      return ncclAllReduce(t.raw_data(), t.raw_data(), size_t(t.numel()), nccl_type(t.dtype()),
                           nccl_op(op, t.dtype()), comm_, stream_);
    });
  }
  void broadcast(const Tensor& t, int root, uint32_t) override {
    run("broadcast", [&] {
      return ncclBroadcast(t.raw_data(), t.raw_data(), size_t(t.numel()), nccl_type(t.dtype()), root, comm_,
                           stream_);
    });
  }
  void all_gather(const Tensor& input, const Tensor& output, uint32_t) override {
    run("all_gather", [&] {
      return ncclAllGather(input.raw_data(), output.raw_data(), size_t(input.numel()), nccl_type(input.dtype()),
                           comm_, stream_);
    });
  }
  void reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op, uint32_t) override {
    run("reduce_scatter", [&] {
      return ncclReduceScatter(input.raw_data(), output.raw_data(), size_t(output.numel()),
                               nccl_type(input.dtype()), nccl_op(op, input.dtype()), comm_, stream_);
    });
  }
  void barrier(uint32_t) override {
    run("barrier", [&] { return ncclAllReduce(barrier_word_, barrier_word_, 1, ncclFloat32, ncclSum, comm_, stream_); });
  }

  // Point to point runs on the group's thread too: NCCL calls on one
  // communicator must not run from two threads at once.
  std::function<void()> start_send(const Tensor& t, int dst, int) override {
    return [this, t, dst] {
      run("send", [&] { return ncclSend(t.raw_data(), size_t(t.numel()), nccl_type(t.dtype()), dst, comm_, stream_); });
    };
  }
  std::function<void()> start_recv(const Tensor& t, int src, int) override {
    return [this, t, src] {
      run("recv", [&] { return ncclRecv(t.raw_data(), size_t(t.numel()), nccl_type(t.dtype()), src, comm_, stream_); });
    };
  }

 private:
  // Orders the operation after the compute stream's queued work, issues it
  // on the group's stream and waits for it, watching for errors and the
  // timeout. The compute stream then waits for it too, so kernels queued
  // after wait() see the result.
  template <class Issue>
  void run(const char* what, Issue issue) {
    std::lock_guard lock(mutex_);
    CudaDeviceGuard guard(device_);
    KILN_CHECK(comm_, Status::invalid_state, "nccl ", what, ": the communicator was aborted after an earlier failure");
    KILN_CUDA_CHECK(cudaEventRecord(compute_done_, cuda::compute_stream(device_)), "nccl ", what);
    KILN_CUDA_CHECK(cudaStreamWaitEvent(stream_, compute_done_, 0), "nccl ", what);
    check_nccl(issue(), str_cat("nccl ", what));
    wait_comm_ready(what);
    KILN_CUDA_CHECK(cudaEventRecord(op_done_, stream_), "nccl ", what);
    const auto deadline = Clock::now() + options_.timeout;
    for (;;) {
      const cudaError_t e = cudaEventQuery(op_done_);
      if (e == cudaSuccess) break;
      if (e != cudaErrorNotReady) throw_cuda_error(e, Status::internal, str_cat("nccl ", what));
      check_async(what);
      if (Clock::now() > deadline) abort_and_throw(Status::timeout, str_cat("nccl ", what, ": timed out after ",
                                                                           options_.timeout.count(), " ms"));
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    KILN_CUDA_CHECK(cudaStreamWaitEvent(cuda::compute_stream(device_), op_done_, 0), "nccl ", what);
  }

  // A non-blocking communicator finishes calls in the background: wait
  // until it reports success or an error, or the timeout passes.
  void wait_comm_ready(const std::string& what) {
    const auto deadline = Clock::now() + options_.timeout;
    for (;;) {
      ncclResult_t state = ncclSuccess;
      check_nccl(ncclCommGetAsyncError(comm_, &state), what);
      if (state == ncclSuccess) return;
      if (state != ncclInProgress) abort_and_throw(Status::peer, str_cat(what, ": NCCL ", ncclGetErrorString(state)));
      if (Clock::now() > deadline) {
        abort_and_throw(Status::timeout, str_cat(what, ": timed out after ", options_.timeout.count(), " ms"));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  void check_async(const char* what) {
    ncclResult_t state = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(comm_, &state), what);
    if (state != ncclSuccess && state != ncclInProgress) {
      abort_and_throw(Status::peer, str_cat("nccl ", what, ": NCCL ", ncclGetErrorString(state)));
    }
  }

  [[noreturn]] void abort_and_throw(Status status, const std::string& message) {
    ncclCommAbort(comm_);
    comm_ = nullptr;
    throw_error(status, message);
  }

  ProcessGroupOptions options_;
  int device_;
  std::mutex mutex_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t compute_done_ = nullptr;
  cudaEvent_t op_done_ = nullptr;
  void* barrier_word_ = nullptr;
};

}  // namespace

const char* nccl_version() {
  static const std::string text = [] {
    int v = 0;
    if (ncclGetVersion(&v) != ncclSuccess) return std::string("unknown");
    // NCCL 2.9 and later: major * 10000 + minor * 100 + patch.
    return str_cat(v / 10000, ".", v / 100 % 100, ".", v % 100);
  }();
  return text.c_str();
}

std::unique_ptr<Backend> make_nccl_backend(const ProcessGroupOptions& options, Store& store,
                                           const std::string& prefix) {
  return std::make_unique<NcclBackend>(options, store, prefix);
}

}  // namespace kiln::dist
