#include "kiln/memory/cpu_allocator.hpp"

#include <algorithm>
#include <cstdlib>

#include "kiln/error.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define KILN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_ASAN 1
#endif
#endif
#ifdef KILN_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace kiln {

// Each block remembers its owner and size just before the aligned pointer,
// so the deleter needs no side table.
struct CpuAllocator::Block {
  CpuAllocator* owner;
  size_t bytes;  // as requested
};

namespace {

constexpr size_t kHeader = kCpuAlignment;

// The cache's bound, in multiples of the most bytes ever in use at once. A
// repeated step's distinct block sizes can add up to more than its peak:
// evaluating 1000 Fashion-MNIST images frees and asks again for 408 MB of
// blocks while at most 231 MB are in use. With the bound at one peak, 180 MB
// of them went back to the system and were faulted in afresh every batch
// (evaluation 2.0 s instead of 1.4 s).
constexpr int64_t kCachedPeaks = 2;

size_t aligned_size(size_t bytes) { return (bytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment; }

void* user_memory(void* block) { return static_cast<char*>(block) + kHeader; }

// A cached block is no one's memory: under AddressSanitizer, touching it is
// reported as a use after free would be.
void mark_cached(void* block, size_t size) {
#ifdef KILN_ASAN
  ASAN_POISON_MEMORY_REGION(user_memory(block), size);
#else
  (void)block, (void)size;
#endif
}

void mark_in_use(void* block, size_t size) {
#ifdef KILN_ASAN
  ASAN_UNPOISON_MEMORY_REGION(user_memory(block), size);
#else
  (void)block, (void)size;
#endif
}

}  // namespace

CpuAllocator::~CpuAllocator() {
  std::lock_guard lock(cache_mutex_);
  flush_cache_locked();
}

MemoryStats CpuAllocator::stats() const {
  MemoryStats s = stats_.snapshot();
  std::lock_guard lock(cache_mutex_);
  s.reserved_bytes = reserved_.load(std::memory_order_relaxed);
  s.cached_free_bytes = cached_bytes_;
  s.active_bytes = s.reserved_bytes - cached_bytes_;
  for (const auto& [size, blocks] : cached_)
    if (!blocks.empty()) s.largest_free_block = std::max(s.largest_free_block, int64_t(size));
  s.fragmentation = cached_bytes_ > 0 ? 1.0 - double(s.largest_free_block) / double(cached_bytes_) : 0.0;
  s.num_reserves = num_reserves_;
  s.num_releases = num_releases_;
  s.cache_hits = cache_hits_;
  s.num_cache_flushes = num_cache_flushes_;
  s.limit_bytes = limit_.load(std::memory_order_relaxed);
  return s;
}

void CpuAllocator::throw_out_of_memory(size_t bytes, const char* reason) const {
  const MemoryStats s = stats();
  throw_error(Status::out_of_memory,
              str_cat("cpu: out of memory allocating ", bytes, " bytes", reason, " (kiln holds ", s.current_bytes,
                      " bytes in ", s.num_allocs - s.num_frees, " blocks, peak ", s.peak_bytes, " bytes)"));
}

void* CpuAllocator::take_cached(size_t size) {
  const auto it = cached_.find(size);
  if (it == cached_.end() || it->second.empty()) return nullptr;
  Block* block = it->second.back();
  it->second.pop_back();
  cached_bytes_ -= int64_t(size);
  ++cache_hits_;
  mark_in_use(block, size);
  return block;
}

bool CpuAllocator::over_limit(size_t size) const {
  const int64_t limit = limit_.load(std::memory_order_relaxed);
  return limit > 0 && (size > uint64_t(limit) || reserved_.load(std::memory_order_relaxed) > limit - int64_t(size));
}

// A new block from the system; when the cap or the system refuses it, the
// cache is given back and the request tried once more. Null when that
// fails too.
void* CpuAllocator::reserve(size_t size) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (attempt == 1) {
      if (cached_bytes_ == 0) break;
      flush_cache_locked();
      ++num_cache_flushes_;
    }
    if (over_limit(size)) continue;
    if (void* raw = std::aligned_alloc(kCpuAlignment, size + kHeader)) {
      reserved_.fetch_add(int64_t(size), std::memory_order_relaxed);
      ++num_reserves_;
      return raw;
    }
  }
  return nullptr;
}

DataPtr CpuAllocator::allocate(size_t bytes) {
  const size_t size = aligned_size(bytes);
  KILN_CHECK(size >= bytes && size <= SIZE_MAX - kHeader, Status::out_of_memory, "cpu: cannot allocate ", bytes,
             " bytes (size overflows)");
  void* raw = nullptr;
  {
    std::lock_guard lock(cache_mutex_);
    if (size >= kCpuCachedMin) raw = take_cached(size);
    if (!raw) raw = reserve(size);
    if (raw) high_water_ = std::max(high_water_, reserved_.load(std::memory_order_relaxed) - cached_bytes_);
  }
  if (!raw) {
    if (over_limit(size))
      throw_out_of_memory(bytes,
                          str_cat(": over the cap of ", limit_.load(std::memory_order_relaxed), " bytes").c_str());
    throw_out_of_memory(bytes, "");
  }
  static_assert(sizeof(Block) <= kHeader);
  auto* block = static_cast<Block*>(raw);
  block->owner = this;
  block->bytes = bytes;
  stats_.on_alloc(int64_t(bytes));
  return DataPtr(user_memory(raw), block, &CpuAllocator::release);
}

void CpuAllocator::release(void* ctx, void* /*ptr*/) {
  auto* block = static_cast<Block*>(ctx);
  CpuAllocator* owner = block->owner;
  owner->stats_.on_free(int64_t(block->bytes));
  const size_t size = aligned_size(block->bytes);
  std::lock_guard lock(owner->cache_mutex_);
  if (size >= kCpuCachedMin && owner->cached_bytes_ + int64_t(size) <= kCachedPeaks * owner->high_water_) {
    try {
      owner->cached_[size].push_back(block);
      owner->cached_bytes_ += int64_t(size);
      mark_cached(block, size);
      return;
    } catch (const std::bad_alloc&) {
      // No room to remember it: it goes back to the system below.
    }
  }
  owner->give_back(block);
}

void CpuAllocator::give_back(Block* block) {
  reserved_.fetch_sub(int64_t(aligned_size(block->bytes)), std::memory_order_relaxed);
  ++num_releases_;
  std::free(block);
}

void CpuAllocator::flush_cache_locked() {
  for (auto& [size, blocks] : cached_)
    for (Block* block : blocks) {
      mark_in_use(block, size);
      give_back(block);
    }
  cached_.clear();
  cached_bytes_ = 0;
}

void CpuAllocator::empty_cache() {
  std::lock_guard lock(cache_mutex_);
  flush_cache_locked();
}

}  // namespace kiln
