#include "kiln/memory/cpu_allocator.hpp"

#include <cstdlib>

#include "kiln/error.hpp"

namespace kiln {
namespace {

// Each block remembers its size just before the aligned pointer, so the
// deleter can keep the statistics without a side table.
constexpr size_t kHeader = kCpuAlignment;

struct Block {
  CpuAllocator* owner;
  size_t bytes;
};

}  // namespace

MemoryStats CpuAllocator::stats() const {
  MemoryStats s = stats_.snapshot();
  s.limit_bytes = limit_.load(std::memory_order_relaxed);
  return s;
}

void CpuAllocator::throw_out_of_memory(size_t bytes, const char* reason) const {
  const MemoryStats s = stats_.snapshot();
  throw_error(Status::out_of_memory,
              str_cat("cpu: out of memory allocating ", bytes, " bytes", reason, " (kiln holds ", s.current_bytes,
                      " bytes in ", s.num_allocs - s.num_frees, " blocks, peak ", s.peak_bytes, " bytes)"));
}

DataPtr CpuAllocator::allocate(size_t bytes) {
  const size_t padded = (bytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
  KILN_CHECK(padded >= bytes && padded <= SIZE_MAX - kHeader, Status::out_of_memory,
             "cpu: cannot allocate ", bytes, " bytes (size overflows)");
  const int64_t limit = limit_.load(std::memory_order_relaxed);
  if (limit > 0 && (bytes > uint64_t(limit) || stats_.snapshot().current_bytes > limit - int64_t(bytes)))
    throw_out_of_memory(bytes, str_cat(": over the cap of ", limit, " bytes").c_str());
  void* raw = std::aligned_alloc(kCpuAlignment, padded + kHeader);
  if (!raw) throw_out_of_memory(bytes, "");
  static_assert(sizeof(Block) <= kHeader);
  auto* block = static_cast<Block*>(raw);
  block->owner = this;
  block->bytes = bytes;
  stats_.on_alloc(int64_t(bytes));
  stats_.on_reserve(int64_t(bytes));
  return DataPtr(static_cast<char*>(raw) + kHeader, block, &CpuAllocator::release);
}

void CpuAllocator::release(void* ctx, void* /*ptr*/) {
  auto* block = static_cast<Block*>(ctx);
  block->owner->stats_.on_free(int64_t(block->bytes));
  block->owner->stats_.on_reserve(-int64_t(block->bytes));
  std::free(block);
}

}  // namespace kiln
