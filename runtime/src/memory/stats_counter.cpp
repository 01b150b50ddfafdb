#include "kiln/memory/allocator.hpp"

namespace kiln {

void StatsCounter::on_alloc(int64_t bytes) {
  const int64_t now = current_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  allocs_.fetch_add(1, std::memory_order_relaxed);
}

void StatsCounter::on_free(int64_t bytes) {
  current_.fetch_sub(bytes, std::memory_order_relaxed);
  frees_.fetch_add(1, std::memory_order_relaxed);
}

MemoryStats StatsCounter::snapshot() const {
  MemoryStats s;
  s.current_bytes = current_.load(std::memory_order_relaxed);
  s.peak_bytes = peak_.load(std::memory_order_relaxed);
  s.reserved_bytes = reserved_.load(std::memory_order_relaxed);
  s.num_allocs = allocs_.load(std::memory_order_relaxed);
  s.num_frees = frees_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace kiln
