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
};

// Reference-counted memory behind one or more tensors.
class Storage {
 public:
  Storage(DataPtr data, size_t nbytes, Device device, std::shared_ptr<Allocator> keep_alive)
      : data_(std::move(data)), nbytes_(nbytes), device_(device), allocator_(std::move(keep_alive)) {}
  void* data() const { return data_.get(); }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

 private:
  DataPtr data_;
  size_t nbytes_;
  Device device_;
  // Holds the allocator until its last allocation is freed, even when the
  // runtime that created it is gone.
  std::shared_ptr<Allocator> allocator_;
};

}  // namespace kiln
