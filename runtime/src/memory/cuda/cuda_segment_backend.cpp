#include "cuda_segment_backend.hpp"

#include "kiln/util/str_cat.hpp"

#include "../human_bytes.hpp"
#include "device_guard.hpp"

namespace kiln {
namespace {

cudaEvent_t as_event(EventId event) { return reinterpret_cast<cudaEvent_t>(event); }

}  // namespace

CudaSegmentBackend::~CudaSegmentBackend() {
  on_device_without_throwing(index_, [&] {
    for (cudaEvent_t event : spare_events_) cudaEventDestroy(event);
  });
}

void* CudaSegmentBackend::reserve(size_t bytes) {
  CudaDeviceGuard guard(index_);
  void* ptr = nullptr;
  const cudaError_t err = cudaMalloc(&ptr, bytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return nullptr;
  }
  if (err != cudaSuccess)
    throw_cuda_error(err, Status::internal, str_cat("cudaMalloc of ", bytes, " bytes on cuda:", index_));
  return ptr;
}

void CudaSegmentBackend::release(void* segment, size_t /*bytes*/) noexcept {
  on_device_without_throwing(index_, [&] { cudaFree(segment); });
}

EventId CudaSegmentBackend::record_event(StreamId stream) noexcept {
  cudaEvent_t event = nullptr;
  bool recorded = false;
  on_device_without_throwing(index_, [&] {
    if (!spare_events_.empty()) {
      event = spare_events_.back();
      spare_events_.pop_back();
    } else if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess) {
      event = nullptr;
      return;
    }
    recorded = cudaEventRecord(event, reinterpret_cast<cudaStream_t>(stream)) == cudaSuccess;
  });
  if (recorded) return reinterpret_cast<EventId>(event);
  // Without an event, waiting for the stream now is the only safe order.
  on_device_without_throwing(index_, [&] {
    if (event) cudaEventDestroy(event);
    cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream));
  });
  return 0;
}

bool CudaSegmentBackend::event_completed(EventId event) noexcept {
  const cudaError_t err = cudaEventQuery(as_event(event));
  if (err == cudaErrorNotReady) return false;
  if (err != cudaSuccess) cudaGetLastError();
  return true;
}

void CudaSegmentBackend::wait_event(EventId event) noexcept {
  if (cudaEventSynchronize(as_event(event)) != cudaSuccess) cudaGetLastError();
}

void CudaSegmentBackend::destroy_event(EventId event) noexcept {
  try {
    spare_events_.push_back(as_event(event));
  } catch (...) {
    on_device_without_throwing(index_, [&] { cudaEventDestroy(as_event(event)); });
  }
}

std::string CudaSegmentBackend::describe_device_memory() {
  size_t free_bytes = 0, total_bytes = 0;
  cudaError_t err = cudaErrorUnknown;
  on_device_without_throwing(index_, [&] { err = cudaMemGetInfo(&free_bytes, &total_bytes); });
  if (err != cudaSuccess) return "";
  return str_cat("; the GPU has ", human_bytes(double(free_bytes)), " free of ", human_bytes(double(total_bytes)));
}

}  // namespace kiln
