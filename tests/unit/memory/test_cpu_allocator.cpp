// The CPU allocator's cache of large blocks: exact-size reuse, the bound on
// what it keeps, and the cap, which empties the cache before it refuses.
#include <catch2/catch.hpp>
#include <cstring>
#include <thread>
#include <vector>

#include "kiln/error.hpp"
#include "kiln/memory/cpu_allocator.hpp"

using namespace kiln;

namespace {

constexpr size_t kLarge = size_t(256) << 10;

}  // namespace

TEST_CASE("cpu allocator: a freed large block serves the next request of its size", "[memory][cpu]") {
  CpuAllocator allocator;
  void* first = nullptr;
  {
    DataPtr p = allocator.allocate(kLarge);
    first = p.get();
    std::memset(p.get(), 1, kLarge);
  }
  MemoryStats s = allocator.stats();
  CHECK(s.cached_free_bytes == int64_t(kLarge));
  CHECK(s.reserved_bytes == int64_t(kLarge));
  CHECK(s.current_bytes == 0);
  {
    DataPtr again = allocator.allocate(kLarge - 10);  // the same 64-byte aligned size
    CHECK(again.get() == first);
    CHECK(reinterpret_cast<uintptr_t>(again.get()) % kCpuAlignment == 0);
    s = allocator.stats();
    CHECK(s.cache_hits == 1);
    CHECK(s.num_reserves == 1);
    CHECK(s.current_bytes == int64_t(kLarge - 10));
    CHECK(s.active_bytes == int64_t(kLarge));
    DataPtr other = allocator.allocate(2 * kLarge);  // no block of that size: a new one
    CHECK(allocator.stats().num_reserves == 2);
  }
  allocator.empty_cache();
  s = allocator.stats();
  CHECK(s.reserved_bytes == 0);
  CHECK(s.cached_free_bytes == 0);
  CHECK(s.num_releases == 2);
}

TEST_CASE("cpu allocator: small blocks are not cached", "[memory][cpu]") {
  CpuAllocator allocator;
  { DataPtr p = allocator.allocate(kCpuCachedMin - kCpuAlignment); }
  const MemoryStats s = allocator.stats();
  CHECK(s.reserved_bytes == 0);
  CHECK(s.num_releases == 1);
}

TEST_CASE("cpu allocator: the cache holds no more than twice the most bytes ever in use", "[memory][cpu]") {
  CpuAllocator allocator;
  {
    std::vector<DataPtr> blocks;  // 4 blocks in use at once: the high-water mark
    for (int i = 0; i < 4; ++i) blocks.push_back(allocator.allocate(kLarge));
  }
  MemoryStats s = allocator.stats();
  CHECK(s.cached_free_bytes == int64_t(4 * kLarge));
  CHECK(s.largest_free_block == int64_t(kLarge));
  CHECK(s.fragmentation == Approx(0.75));
  // A block of a new size fits in the second half of the bound: cached too.
  { DataPtr other = allocator.allocate(4 * kLarge); }
  s = allocator.stats();
  CHECK(s.cached_free_bytes == int64_t(8 * kLarge));
  CHECK(s.num_releases == 0);
  // One more would take the cache past twice the mark: it goes back to the
  // system.
  { DataPtr third = allocator.allocate(3 * kLarge); }
  s = allocator.stats();
  CHECK(s.cached_free_bytes == int64_t(8 * kLarge));
  CHECK(s.reserved_bytes == int64_t(8 * kLarge));
  CHECK(s.num_releases == 1);
}

TEST_CASE("cpu allocator: the cap counts cached blocks and empties the cache before refusing", "[memory][cpu]") {
  CpuAllocator allocator;
  { DataPtr p = allocator.allocate(4 * kLarge); }
  CHECK(allocator.stats().cached_free_bytes == int64_t(4 * kLarge));
  allocator.set_limit(int64_t(5 * kLarge));
  {
    DataPtr p = allocator.allocate(2 * kLarge);  // would go over with the cache held: it is emptied
    const MemoryStats s = allocator.stats();
    CHECK(s.num_cache_flushes == 1);
    CHECK(s.cached_free_bytes == 0);
    CHECK(s.reserved_bytes == int64_t(2 * kLarge));
    CHECK_THROWS_WITH(allocator.allocate(4 * kLarge), Catch::Contains("over the cap of"));
  }
  CHECK(allocator.stats().current_bytes == 0);
}

TEST_CASE("cpu allocator: threads allocating and freeing at once", "[memory][cpu]") {
  CpuAllocator allocator;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&allocator, t] {
      for (int i = 0; i < 200; ++i) {
        DataPtr p = allocator.allocate(kLarge * size_t(1 + (i + t) % 3));
        static_cast<char*>(p.get())[0] = char(i);
      }
    });
  for (std::thread& t : threads) t.join();
  const MemoryStats s = allocator.stats();
  CHECK(s.current_bytes == 0);
  CHECK(s.num_allocs == 800);
  CHECK(s.num_frees == 800);
  CHECK(s.reserved_bytes == s.cached_free_bytes);
  CHECK(s.cache_hits + s.num_reserves == 800);
}
