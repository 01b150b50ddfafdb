// Host memory: 64-byte aligned so every SIMD width and oneDNN are happy.
//
// Blocks of kCpuCachedMin bytes or more are cached when freed, keyed by
// their exact (aligned) size, and serve the next request of that size. A
// training step asks for the same sizes every step, so after the first one
// its tensors come from the cache: no system call, and above all no fresh
// pages for the kernel to fault in and clear (which cost an element-wise op
// on a new megabyte more than its arithmetic). Smaller blocks go straight to
// malloc, which keeps them in its heap anyway.
//
// The free blocks cached at once never exceed twice the most bytes that
// were ever in use together (a step's distinct sizes can add up to more
// than its peak), so caching at most triples what a run holds from the
// system; empty_cache() gives them all back.
//
// An optional cap makes running out of memory happen where a host chooses
// (a batch-size search, a process sharing the machine), with the same
// out-of-memory error as the system's refusal. It bounds what is reserved,
// cached blocks included: a request that would go over it, or that the
// system refuses, first empties the cache and tries again.
#pragma once

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "kiln/memory/allocator.hpp"

namespace kiln {

inline constexpr size_t kCpuAlignment = 64;
inline constexpr size_t kCpuCachedMin = size_t(32) << 10;

class CpuAllocator final : public Allocator {
 public:
  CpuAllocator() = default;
  ~CpuAllocator() override;
  CpuAllocator(const CpuAllocator&) = delete;
  CpuAllocator& operator=(const CpuAllocator&) = delete;

  Device device() const override { return Device::cpu(); }
  DataPtr allocate(size_t bytes) override;
  MemoryStats stats() const override;
  void reset_peak() override { stats_.reset_peak(); }
  void empty_cache() override;
  // At most `bytes` reserved at once, cached blocks included (0: no cap). A
  // request that would go over even with the cache emptied fails with
  // Error(out_of_memory) naming the cap. It is checked against what is held
  // when the request arrives: requests racing on several threads may
  // together go over by what they ask at that moment.
  void set_limit(int64_t bytes) { limit_.store(bytes, std::memory_order_relaxed); }

 private:
  struct Block;
  static void release(void* ctx, void* ptr);
  void* take_cached(size_t size);
  void* reserve(size_t size);
  bool over_limit(size_t size) const;
  void give_back(Block* block);
  void flush_cache_locked();
  [[noreturn]] void throw_out_of_memory(size_t bytes, const char* reason) const;

  StatsCounter stats_;
  std::atomic<int64_t> limit_{0};
  std::atomic<int64_t> reserved_{0};  // bytes held from the system, cached blocks included
  mutable std::mutex cache_mutex_;    // guards what follows
  std::unordered_map<size_t, std::vector<Block*>> cached_;  // free blocks by size
  int64_t cached_bytes_ = 0;
  int64_t high_water_ = 0;  // the most bytes in use at once, never reset
  int64_t cache_hits_ = 0, num_reserves_ = 0, num_releases_ = 0, num_cache_flushes_ = 0;
};

}  // namespace kiln
