// One allocator interface for every device. An allocation carries its
// deleter (DataPtr), so memory always returns to the allocator that gave it,
// and memory a host wraps goes back through the host's own release callback.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "kiln/device.hpp"

namespace kiln {

struct MemoryStats {
  int64_t current_bytes = 0;   // bytes held by live allocations
  int64_t peak_bytes = 0;      // highest current_bytes seen
  int64_t reserved_bytes = 0;  // bytes obtained from the system (>= current for caching allocators)
  int64_t num_allocs = 0;      // allocations served since creation
  int64_t num_frees = 0;
  // Caching allocators fill these; the others leave them 0.
  int64_t active_bytes = 0;        // bytes of blocks in use, after size rounding; a block freed while
                                   // another stream may still use it counts until that stream is done
  int64_t cached_free_bytes = 0;   // reserved_bytes - active_bytes: reusable without asking the system
  int64_t largest_free_block = 0;  // bytes of the largest cached free block
  int64_t num_reserves = 0;        // segments obtained from the system (cudaMalloc calls)
  int64_t num_releases = 0;        // segments given back (cudaFree calls)
  int64_t cache_hits = 0;          // allocations served from cached memory, without a new segment
  int64_t num_cache_flushes = 0;   // times an allocation emptied the cache to retry (out of memory)
  int64_t limit_bytes = 0;         // cap on reserved_bytes; 0: none but the device's own size
  // How scattered the cached free memory is: 1 - largest_free_block /
  // cached_free_bytes. 0 when nothing is cached or it is one block; near 1
  // when it is many small pieces that a large request cannot use.
  double fragmentation = 0;
};

// Owning pointer to device memory with the function that frees it.
class DataPtr {
 public:
  using Deleter = void (*)(void* ctx, void* ptr);
  DataPtr() = default;
  DataPtr(void* ptr, void* ctx, Deleter deleter) : ptr_(ptr), ctx_(ctx), deleter_(deleter) {}
  DataPtr(DataPtr&& o) noexcept { swap(o); }
  DataPtr& operator=(DataPtr&& o) noexcept {
    DataPtr tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  ~DataPtr() {
    if (deleter_) deleter_(ctx_, ptr_);
  }
  void* get() const { return ptr_; }

 private:
  void swap(DataPtr& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(ctx_, o.ctx_);
    std::swap(deleter_, o.deleter_);
  }
  void* ptr_ = nullptr;
  void* ctx_ = nullptr;
  Deleter deleter_ = nullptr;
};

// Thread-safe counters shared by allocator implementations.
class StatsCounter {
 public:
  void on_alloc(int64_t bytes);
  void on_free(int64_t bytes);
  void on_reserve(int64_t delta) { reserved_.fetch_add(delta, std::memory_order_relaxed); }
  // Starts a new peak from what is held now.
  void reset_peak() { peak_.store(current_.load(std::memory_order_relaxed), std::memory_order_relaxed); }
  MemoryStats snapshot() const;

 private:
  std::atomic<int64_t> current_{0}, peak_{0}, reserved_{0}, allocs_{0}, frees_{0};
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual Device device() const = 0;
  // Returns memory for `bytes` bytes (a valid, possibly null pointer for 0
  // bytes). Throws Error(out_of_memory) naming the request and the statistics.
  virtual DataPtr allocate(size_t bytes) = 0;
  virtual MemoryStats stats() const = 0;
  // peak_bytes starts again from current_bytes, so a step or a trial run
  // can measure its own peak.
  virtual void reset_peak() = 0;
  // Gives cached memory that no allocation uses back to the system; an
  // allocator that caches nothing has nothing to do.
  virtual void empty_cache() {}
};

// Reference-counted memory behind one or more tensors.
class Storage {
 public:
  Storage(DataPtr data, size_t nbytes, Device device, std::shared_ptr<Allocator> keep_alive)
      : allocator_(std::move(keep_alive)), data_(std::move(data)), nbytes_(nbytes), device_(device) {}
  void* data() const { return data_.get(); }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

 private:
  // Holds the allocator until its last allocation is freed, even when the
  // runtime that created it is gone. Declared before data_, so destroyed
  // after it: data_'s deleter still reaches the allocator.
  std::shared_ptr<Allocator> allocator_;
  DataPtr data_;
  size_t nbytes_;
  Device device_;
};

}  // namespace kiln
