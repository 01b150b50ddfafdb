// Host memory: 64-byte aligned so every SIMD width and oneDNN are happy.
#pragma once

#include "kiln/memory/allocator.hpp"

namespace kiln {

inline constexpr size_t kCpuAlignment = 64;

class CpuAllocator final : public Allocator {
 public:
  Device device() const override { return Device::cpu(); }
  DataPtr allocate(size_t bytes) override;
  MemoryStats stats() const override { return stats_.snapshot(); }

 private:
  static void release(void* ctx, void* ptr);
  StatsCounter stats_;
};

}  // namespace kiln
