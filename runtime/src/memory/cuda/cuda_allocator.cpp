// The device allocator of a GPU: the caching allocator on a CUDA backend,
// serving kiln's compute stream, capped by KILN_CUDA_MEMORY_FRACTION.
#include <cstdlib>

#include "kiln/memory/caching_allocator.hpp"
#include "kiln/memory/cuda.hpp"
#include "kiln/memory/memory_fraction.hpp"

#include "../../kernels/cuda/stream.hpp"
#include "cuda_segment_backend.hpp"
#include "device_guard.hpp"

namespace kiln {

std::shared_ptr<Allocator> make_cuda_allocator(int index) {
  int count = 0;
  KILN_CUDA_CHECK(cudaGetDeviceCount(&count), "creating an allocator for cuda:", index);
  KILN_CHECK(index >= 0 && index < count, Status::device_mismatch, "cannot create an allocator for cuda:", index, ": ",
             count, " GPU(s) found");
  const double fraction = parse_memory_fraction(std::getenv(kMemoryFractionVariable));
  CachingAllocatorOptions options;
  options.default_stream = reinterpret_cast<StreamId>(cuda::compute_stream(index));
  if (fraction < 1.0) {
    size_t free_bytes = 0, total_bytes = 0;
    {
      CudaDeviceGuard guard(index);
      KILN_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes), "reading the memory size of cuda:", index);
    }
    options.limit_bytes = memory_limit_bytes(fraction, total_bytes);
  }
  return std::make_shared<CachingAllocator>(std::make_unique<CudaSegmentBackend>(index), std::move(options));
}

}  // namespace kiln
