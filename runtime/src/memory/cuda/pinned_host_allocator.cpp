// Page-locked host memory with a cache of freed blocks by exact size.
// cudaHostAlloc is slow and synchronises with the device, so a loader that
// asked for it once per batch would stall training; batches of one loader
// all have the same size, so exact-size reuse serves nearly every request
// from the cache after the first few steps.
#include <map>
#include <memory>
#include <mutex>

#include "kiln/memory/cuda.hpp"

#include "cuda_error.hpp"

namespace kiln {
namespace {

class PinnedHostAllocator final : public Allocator {
 public:
  PinnedHostAllocator() = default;
  PinnedHostAllocator(const PinnedHostAllocator&) = delete;
  PinnedHostAllocator& operator=(const PinnedHostAllocator&) = delete;
  // Storage keeps the allocator alive until its last block is back, so
  // only cached blocks remain here.
  ~PinnedHostAllocator() override {
    for (const auto& [bytes, ptr] : cache_)
      if (cudaFreeHost(ptr) != cudaSuccess) cudaGetLastError();  // the context is gone at process exit
  }

  Device device() const override { return Device::cpu(); }
  MemoryStats stats() const override { return stats_.snapshot(); }
  void reset_peak() override { stats_.reset_peak(); }

  DataPtr allocate(size_t bytes) override {
    if (bytes == 0) return DataPtr();
    auto block = std::make_unique<Block>(Block{this, bytes});
    void* ptr = take_cached(bytes);
    if (!ptr) {
      const cudaError_t err = cudaHostAlloc(&ptr, bytes, cudaHostAllocDefault);
      if (err != cudaSuccess)
        throw_cuda_error(err, err == cudaErrorMemoryAllocation ? Status::out_of_memory : Status::internal,
                         str_cat("cudaHostAlloc of ", bytes, " bytes of page-locked host memory"));
      stats_.on_reserve(int64_t(bytes));
    }
    stats_.on_alloc(int64_t(bytes));
    return DataPtr(ptr, block.release(), &PinnedHostAllocator::release);
  }

 private:
  struct Block {
    PinnedHostAllocator* owner;
    size_t bytes;
  };

  void* take_cached(size_t bytes) {
    std::lock_guard lock(mutex_);
    const auto it = cache_.find(bytes);
    if (it == cache_.end()) return nullptr;
    void* ptr = it->second;
    cache_.erase(it);
    return ptr;
  }

  static void release(void* ctx, void* ptr) {
    const std::unique_ptr<Block> block(static_cast<Block*>(ctx));
    PinnedHostAllocator& owner = *block->owner;
    owner.stats_.on_free(int64_t(block->bytes));
    try {
      std::lock_guard lock(owner.mutex_);
      owner.cache_.emplace(block->bytes, ptr);  // kept page-locked for the next batch of this size
    } catch (...) {
      // No room to remember it (deleters cannot throw): give it back instead.
      if (cudaFreeHost(ptr) != cudaSuccess) cudaGetLastError();
      owner.stats_.on_reserve(-int64_t(block->bytes));
    }
  }

  std::mutex mutex_;
  std::multimap<size_t, void*> cache_;  // freed blocks by size
  StatsCounter stats_;
};

}  // namespace

std::shared_ptr<Allocator> make_pinned_host_allocator() { return std::make_shared<PinnedHostAllocator>(); }

}  // namespace kiln
