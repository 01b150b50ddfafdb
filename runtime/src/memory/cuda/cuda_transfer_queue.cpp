// The CUDA transfer queue: a non-blocking stream per GPU for input copies.
// A stream created without cudaStreamNonBlocking would be ordered against
// the legacy default stream, where kiln's kernels run, and every copy would
// wait for the step in progress: the overlap would be lost.
#include <memory>

#include "kiln/memory/cuda.hpp"

#include "../../kernels/cuda/stream.hpp"
#include "device_guard.hpp"

namespace kiln {
namespace {

cudaEvent_t as_event(uintptr_t id) { return reinterpret_cast<cudaEvent_t>(id); }

// Two timing events around the compute stream's wait for a copy.
struct WaitProbe {
  WaitProbe() = default;
  WaitProbe(const WaitProbe&) = delete;
  WaitProbe& operator=(const WaitProbe&) = delete;
  ~WaitProbe() {
    if (before) cudaEventDestroy(before);
    if (after) cudaEventDestroy(after);
  }
  cudaEvent_t before = nullptr;
  cudaEvent_t after = nullptr;
};

// Records a fresh timing event on `stream`; false when that fails.
bool record_timing_event(cudaEvent_t* event, cudaStream_t stream) {
  const bool recorded = cudaEventCreate(event) == cudaSuccess && cudaEventRecord(*event, stream) == cudaSuccess;
  if (!recorded) cudaGetLastError();
  return recorded;
}

class CudaTransferQueue final : public TransferQueue {
 public:
  explicit CudaTransferQueue(int index) : index_(index) {
    CudaDeviceGuard guard(index_);
    KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking),
                    "creating the input copy stream of cuda:", index_);
  }
  // Copies still queued read memory their owners are about to free.
  ~CudaTransferQueue() override {
    on_device_without_throwing(index_, [&] {
      cudaStreamSynchronize(copy_stream_);
      cudaStreamDestroy(copy_stream_);
    });
  }
  CudaTransferQueue(const CudaTransferQueue&) = delete;
  CudaTransferQueue& operator=(const CudaTransferQueue&) = delete;

  Device device() const override { return Device::cuda(index_); }
  StreamId copy_stream() const override { return reinterpret_cast<StreamId>(copy_stream_); }
  StreamId compute_stream() const override { return reinterpret_cast<StreamId>(cuda::compute_stream(index_)); }

  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    CudaDeviceGuard guard(index_);
    KILN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, copy_stream_), "queueing a copy of ",
                    bytes, " bytes to cuda:", index_);
  }

  Ticket record_copies() override {
    CudaDeviceGuard guard(index_);
    cudaEvent_t event = create_event(cudaEventDisableTiming);
    const cudaError_t err = cudaEventRecord(event, copy_stream_);
    if (err != cudaSuccess) {
      cudaEventDestroy(event);
      throw_cuda_error(err, Status::internal, str_cat("recording the input copies of cuda:", index_));
    }
    return reinterpret_cast<Ticket>(event);
  }

  Probe compute_waits_for(Ticket ticket) override {
    CudaDeviceGuard guard(index_);
    const cudaStream_t compute = cuda::compute_stream(index_);
    // The wait is what matters; timing it is best effort.
    auto probe = std::make_unique<WaitProbe>();
    const bool timed = record_timing_event(&probe->before, compute);
    KILN_CUDA_CHECK(cudaStreamWaitEvent(compute, as_event(ticket), 0),
                    "making the compute stream of cuda:", index_, " wait for an input copy");
    if (!timed || !record_timing_event(&probe->after, compute)) return 0;
    return reinterpret_cast<Probe>(probe.release());
  }

  bool completed(Ticket ticket) noexcept override { return event_done(as_event(ticket)); }

  void wait(Ticket ticket) noexcept override {
    if (cudaEventSynchronize(as_event(ticket)) != cudaSuccess) cudaGetLastError();
  }

  void release(Ticket ticket) noexcept override {
    on_device_without_throwing(index_, [&] { cudaEventDestroy(as_event(ticket)); });
  }

  std::optional<double> probe_seconds(Probe probe) noexcept override {
    const WaitProbe& p = *reinterpret_cast<const WaitProbe*>(probe);
    if (!event_done(p.after)) return std::nullopt;
    float ms = 0;
    if (cudaEventElapsedTime(&ms, p.before, p.after) != cudaSuccess) {
      cudaGetLastError();
      return 0.0;  // measured as nothing rather than held forever
    }
    return double(ms) / 1000.0;
  }

  void release_probe(Probe probe) noexcept override {
    on_device_without_throwing(index_, [&] { delete reinterpret_cast<WaitProbe*>(probe); });
  }

 private:
  cudaEvent_t create_event(unsigned flags) const {
    cudaEvent_t event = nullptr;
    KILN_CUDA_CHECK(cudaEventCreateWithFlags(&event, flags), "creating an event on cuda:", index_);
    return event;
  }

  // An event whose state cannot be read any more counts as done: no work
  // can still be running.
  static bool event_done(cudaEvent_t event) noexcept {
    const cudaError_t err = cudaEventQuery(event);
    if (err == cudaErrorNotReady) return false;
    if (err != cudaSuccess) cudaGetLastError();
    return true;
  }

  int index_;
  cudaStream_t copy_stream_ = nullptr;
};

}  // namespace

std::shared_ptr<TransferQueue> make_cuda_transfer_queue(int index) {
  return std::make_shared<CudaTransferQueue>(index);
}

}  // namespace kiln
