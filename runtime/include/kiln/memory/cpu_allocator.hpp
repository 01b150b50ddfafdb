// Host memory: 64-byte aligned so every SIMD width and oneDNN are happy.
// An optional cap makes running out of memory happen where a host chooses
// (a batch-size search, a process sharing the machine), with the same
// out-of-memory error as the system's refusal.
#pragma once

#include <atomic>

#include "kiln/memory/allocator.hpp"

namespace kiln {

inline constexpr size_t kCpuAlignment = 64;

class CpuAllocator final : public Allocator {
 public:
  Device device() const override { return Device::cpu(); }
  DataPtr allocate(size_t bytes) override;
  MemoryStats stats() const override;
  void reset_peak() override { stats_.reset_peak(); }
  // At most `bytes` held at once (0: no cap). A request that would go over
  // fails with Error(out_of_memory) naming the cap. It is checked against
  // what is held when the request arrives: requests racing on several
  // threads may together go over by what they ask at that moment.
  void set_limit(int64_t bytes) { limit_.store(bytes, std::memory_order_relaxed); }

 private:
  static void release(void* ctx, void* ptr);
  [[noreturn]] void throw_out_of_memory(size_t bytes, const char* reason) const;
  StatsCounter stats_;
  std::atomic<int64_t> limit_{0};
};

}  // namespace kiln
