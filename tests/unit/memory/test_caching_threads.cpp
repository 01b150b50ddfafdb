// Many threads allocating and freeing at once never receive overlapping
// blocks, and the statistics add up afterwards.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <thread>

#include "caching_test_support.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// Marks both ends of a block with the owner's tag, then checks them after
// other threads had the chance to write into it.
bool keeps_its_tag(const DataPtr& p, size_t bytes, uint64_t tag) {
  char* begin = address(p);
  char* end = begin + bytes - sizeof tag;
  std::memcpy(begin, &tag, sizeof tag);
  std::memcpy(end, &tag, sizeof tag);
  std::this_thread::yield();
  uint64_t first = 0, last = 0;
  std::memcpy(&first, begin, sizeof tag);
  std::memcpy(&last, end, sizeof tag);
  return first == tag && last == tag;
}

}  // namespace

TEST_CASE("concurrent allocations and frees from several threads stay apart", "[memory][caching][threads]") {
  auto device = std::make_shared<FakeDevice>(2048 * kMiB);
  auto alloc = make_caching_allocator(device);
  constexpr int kThreads = 8;
  constexpr int kRounds = 500;
  std::vector<int> corrupted(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 gen{uint32_t(t)};
      // Mostly small requests, some large ones, a few with a segment of their own.
      const size_t limits[] = {64 * 1024, 64 * 1024, 64 * 1024, 4 * kMiB, 12 * kMiB};
      std::vector<std::pair<DataPtr, size_t>> held;
      for (int round = 0; round < kRounds; ++round) {
        const size_t bytes = 8 + gen() % limits[gen() % std::size(limits)];
        held.emplace_back(alloc->allocate(bytes), bytes);
        const uint64_t tag = uint64_t(t) << 32 | uint64_t(round);
        if (!keeps_its_tag(held.back().first, bytes, tag)) ++corrupted[size_t(t)];
        if (held.size() > 4) held.erase(held.begin() + std::ptrdiff_t(gen() % held.size()));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(corrupted == std::vector<int>(kThreads, 0));
  const MemoryStats s = alloc->stats();
  CHECK(s.current_bytes == 0);
  CHECK(s.active_bytes == 0);
  CHECK(s.num_allocs == kThreads * kRounds);
  CHECK(s.num_frees == kThreads * kRounds);
  CHECK(s.cache_hits > 0);
  CHECK(s.reserved_bytes == int64_t(device->used));
  alloc.reset();
  CHECK(device->live_segments.empty());
  CHECK(device->bad_releases == 0);
}
