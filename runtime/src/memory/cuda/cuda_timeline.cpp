// The CUDA device timeline: a mark is a timing event recorded on a stream,
// and cudaEventElapsedTime gives the GPU's time between two of them.
#include "kiln/memory/cuda.hpp"
#include "kiln/profiler/device_timeline.hpp"

#include "../../kernels/cuda/stream.hpp"
#include "device_guard.hpp"

namespace kiln {
namespace {

cudaEvent_t as_event(DeviceTimeline::Mark mark) { return reinterpret_cast<cudaEvent_t>(mark); }

class CudaTimeline final : public DeviceTimeline {
 public:
  explicit CudaTimeline(int index) : index_(index) {
    // Fails here, where the caller can be told, rather than at every mark.
    CudaDeviceGuard guard(index_);
  }

  Device device() const override { return Device::cuda(index_); }
  StreamId compute_stream() const override { return reinterpret_cast<StreamId>(cuda::compute_stream(index_)); }

  Mark mark(StreamId stream) noexcept override {
    cudaEvent_t event = nullptr;
    on_device_without_throwing(index_, [&] {
      if (cudaEventCreate(&event) != cudaSuccess) {
        event = nullptr;
        return;
      }
      if (cudaEventRecord(event, reinterpret_cast<cudaStream_t>(stream)) != cudaSuccess) {
        cudaEventDestroy(event);
        event = nullptr;
      }
    });
    return reinterpret_cast<Mark>(event);
  }

  void wait(Mark mark) noexcept override {
    if (mark && cudaEventSynchronize(as_event(mark)) != cudaSuccess) cudaGetLastError();
  }

  std::optional<double> seconds_between(Mark from, Mark to) noexcept override {
    if (!from || !to) return std::nullopt;
    float ms = 0;
    if (cudaEventElapsedTime(&ms, as_event(from), as_event(to)) != cudaSuccess) {
      cudaGetLastError();
      return std::nullopt;
    }
    return double(ms) / 1000.0;
  }

  void release(Mark mark) noexcept override {
    if (mark) on_device_without_throwing(index_, [&] { cudaEventDestroy(as_event(mark)); });
  }

 private:
  int index_;
};

}  // namespace

std::unique_ptr<DeviceTimeline> make_cuda_timeline(int index) { return std::make_unique<CudaTimeline>(index); }

}  // namespace kiln
