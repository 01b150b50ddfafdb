// Device memory straight from cudaMalloc, one call per allocation. Simple and
// correct; the caching allocator of the design replaces it later behind the
// same Allocator interface.
#include <cstdio>
#include <memory>

#include "kiln/memory/cuda.hpp"

#include "cuda_error.hpp"
#include "device_guard.hpp"

namespace kiln {
namespace {

// "1.5 GiB": sizes in an out-of-memory message are read by people.
std::string human_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  size_t unit = 0;
  while (bytes >= 1024.0 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", bytes, kUnits[unit]);
  return text;
}

class CudaAllocator final : public Allocator {
 public:
  explicit CudaAllocator(int index) : index_(index) {}
  Device device() const override { return Device::cuda(index_); }
  MemoryStats stats() const override { return stats_.snapshot(); }

  DataPtr allocate(size_t bytes) override {
    if (bytes == 0) return DataPtr();
    auto block = std::make_unique<Block>(Block{this, bytes});  // before cudaMalloc, so nothing can leak
    CudaDeviceGuard guard(index_);
    void* ptr = nullptr;
    const cudaError_t err = cudaMalloc(&ptr, bytes);
    if (err == cudaErrorMemoryAllocation) throw_out_of_memory(bytes, err);
    if (err != cudaSuccess)
      throw_cuda_error(err, Status::internal, str_cat("cudaMalloc of ", bytes, " bytes on cuda:", index_));
    stats_.on_alloc(int64_t(bytes));
    stats_.on_reserve(int64_t(bytes));
    return DataPtr(ptr, block.release(), &CudaAllocator::release);
  }

 private:
  // The deleter's context: who allocated the block and how large it is.
  // Storage keeps the allocator alive until its last block is freed.
  struct Block {
    CudaAllocator* owner;
    size_t bytes;
  };

  static void release(void* ctx, void* ptr) {
    std::unique_ptr<Block> block(static_cast<Block*>(ctx));
    CudaAllocator& owner = *block->owner;
    // Deleters run in destructors and cannot throw. Switching devices or
    // cudaFree fail only when the context is already gone (process
    // teardown), and then the memory is gone with it.
    try {
      CudaDeviceGuard guard(owner.index_);
      if (cudaFree(ptr) != cudaSuccess) cudaGetLastError();
    } catch (const Error&) {
    }
    owner.stats_.on_free(int64_t(block->bytes));
    owner.stats_.on_reserve(-int64_t(block->bytes));
  }

  [[noreturn]] void throw_out_of_memory(size_t bytes, cudaError_t err) {
    cudaGetLastError();
    const MemoryStats s = stats_.snapshot();
    std::string device_state;
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
      device_state = str_cat("; the GPU has ", human_bytes(double(free_bytes)), " free of ",
                             human_bytes(double(total_bytes)));
    else
      cudaGetLastError();
    throw_error(Status::out_of_memory,
                str_cat("cuda:", index_, ": out of memory allocating ", bytes, " bytes (", human_bytes(double(bytes)),
                        ") (kiln holds ", s.current_bytes, " bytes in ", s.num_allocs - s.num_frees,
                        " blocks on this device, peak ", s.peak_bytes, " bytes", device_state, "; ",
                        cuda_error_text(err), ")"));
  }

  int index_;
  StatsCounter stats_;
};

}  // namespace

std::shared_ptr<Allocator> make_cuda_allocator(int index) {
  int count = 0;
  KILN_CUDA_CHECK(cudaGetDeviceCount(&count), "creating an allocator for cuda:", index);
  KILN_CHECK(index >= 0 && index < count, Status::device_mismatch, "cannot create an allocator for cuda:", index, ": ",
             count, " GPU(s) found");
  return std::make_shared<CudaAllocator>(index);
}

}  // namespace kiln
