// The caching allocator's reuse, size classes, splitting and merging, on a
// fake device (fake_segment_backend.hpp).
#include <catch2/catch.hpp>

#include "caching_test_support.hpp"
#include "kiln/memory/caching_sizes.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("a freed block is reused without reserving another segment", "[memory][caching]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  char* first = nullptr;
  {
    DataPtr p = alloc->allocate(1000);
    first = address(p);
    REQUIRE(first != nullptr);
  }
  DataPtr again = alloc->allocate(1000);
  CHECK(address(again) == first);
  CHECK(device->reserves == 1);
  const MemoryStats s = alloc->stats();
  CHECK(s.num_reserves == 1);
  CHECK(s.cache_hits == 1);
  CHECK(s.num_allocs == 2);
  CHECK(s.num_frees == 1);
}

TEST_CASE("a request of 0 bytes gives an empty pointer and touches nothing", "[memory][caching]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  DataPtr p = alloc->allocate(0);
  CHECK(p.get() == nullptr);
  CHECK(alloc->stats().num_allocs == 0);
  CHECK(device->reserves == 0);
}

TEST_CASE("requests are rounded up to multiples of 512 bytes", "[memory][caching]") {
  using caching::round_request;
  CHECK(round_request(1) == 512);
  CHECK(round_request(512) == 512);
  CHECK(round_request(513) == 1024);
  CHECK(round_request(3 * kMiB + 1) == 3 * kMiB + 512);

  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  DataPtr a = alloc->allocate(1);
  DataPtr b = alloc->allocate(513);
  DataPtr c = alloc->allocate(7);
  CHECK(address(b) == address(a) + 512);
  CHECK(address(c) == address(b) + 1024);
  const MemoryStats s = alloc->stats();
  CHECK(s.current_bytes == 1 + 513 + 7);  // what was asked for
  CHECK(s.active_bytes == 512 + 1024 + 512);
}

TEST_CASE("segment sizes follow the pool and the request", "[memory][caching]") {
  using caching::segment_size_for;
  CHECK(segment_size_for(512) == 2 * kMiB);
  CHECK(segment_size_for(kMiB) == 2 * kMiB);         // the largest small request
  CHECK(segment_size_for(kMiB + 512) == 20 * kMiB);  // the smallest large one
  CHECK(segment_size_for(10 * kMiB - 512) == 20 * kMiB);
  CHECK(segment_size_for(10 * kMiB) == 10 * kMiB);  // from here on, a segment of its own
  CHECK(segment_size_for(11 * kMiB) == 12 * kMiB);  // rounded to 2 MiB

  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  DataPtr small = alloc->allocate(kMiB);
  CHECK(alloc->stats().reserved_bytes == int64_t(2 * kMiB));
  DataPtr huge = alloc->allocate(11 * kMiB - 3);
  CHECK(alloc->stats().reserved_bytes == int64_t(14 * kMiB));
  DataPtr large = alloc->allocate(kMiB + 1);  // the 1 MiB left of huge's segment is too small
  CHECK(alloc->stats().reserved_bytes == int64_t(34 * kMiB));
  CHECK(device->reserves == 3);
}

TEST_CASE("small and large requests are served from separate pools", "[memory][caching]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  alloc->allocate(2 * kMiB);  // freed at once: a cached 20 MiB segment
  DataPtr small = alloc->allocate(4096);
  CHECK(device->reserves == 2);  // the large pool's free memory does not serve it
  CHECK(alloc->stats().reserved_bytes == int64_t(22 * kMiB));
  DataPtr large = alloc->allocate(3 * kMiB);
  CHECK(device->reserves == 2);  // but it serves the next large request
  CHECK(alloc->stats().cache_hits == 1);
}

TEST_CASE("blocks are split off a segment and merged again when freed", "[memory][caching]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  const size_t quarter = 512 * 1024;
  DataPtr a = alloc->allocate(quarter);
  DataPtr b = alloc->allocate(quarter);
  DataPtr c = alloc->allocate(quarter);
  char* base = address(a);
  CHECK(address(b) == base + quarter);
  CHECK(address(c) == base + 2 * quarter);
  CHECK(device->reserves == 1);

  b = DataPtr();  // free: b's quarter and the last quarter, apart
  MemoryStats s = alloc->stats();
  CHECK(s.cached_free_bytes == int64_t(2 * quarter));
  CHECK(s.largest_free_block == int64_t(quarter));
  CHECK(s.fragmentation == Approx(0.5));

  a = DataPtr();  // merges with b's block
  s = alloc->stats();
  CHECK(s.largest_free_block == int64_t(2 * quarter));
  CHECK(s.fragmentation == Approx(1.0 / 3.0));

  c = DataPtr();  // the whole segment is one free block again
  s = alloc->stats();
  CHECK(s.largest_free_block == int64_t(2 * kMiB));
  CHECK(s.fragmentation == 0.0);
  DataPtr whole = alloc->allocate(kMiB);
  CHECK(address(whole) == base);
  CHECK(device->reserves == 1);
}

TEST_CASE("a large block keeps a remainder of up to 1 MiB instead of splitting it off", "[memory][caching]") {
  CHECK_FALSE(caching::should_split(false, kMiB));
  CHECK(caching::should_split(false, kMiB + 512));
  CHECK(caching::should_split(true, 512));
  CHECK_FALSE(caching::should_split(true, 0));

  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  DataPtr almost_all = alloc->allocate(19 * kMiB);
  CHECK(alloc->stats().active_bytes == int64_t(20 * kMiB));
  CHECK(alloc->stats().cached_free_bytes == 0);
  almost_all = DataPtr();
  DataPtr part = alloc->allocate(2 * kMiB);
  CHECK(alloc->stats().active_bytes == int64_t(2 * kMiB));
  CHECK(alloc->stats().largest_free_block == int64_t(18 * kMiB));
}

TEST_CASE("a request takes the smallest cached block that fits, the lowest address first", "[memory][caching]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  // One 20 MiB segment: a 4 | 2 | c 6 | 2 | 6 free (MiB).
  DataPtr a = alloc->allocate(4 * kMiB);
  DataPtr gap1 = alloc->allocate(2 * kMiB);
  DataPtr c = alloc->allocate(6 * kMiB);
  DataPtr gap2 = alloc->allocate(2 * kMiB);
  char* const a_at = address(a);
  char* const c_at = address(c);
  a = DataPtr();
  c = DataPtr();
  REQUIRE(device->reserves == 1);
  DataPtr three = alloc->allocate(3 * kMiB);
  CHECK(address(three) == a_at);  // 4 MiB fits better than either 6 MiB block
  DataPtr five = alloc->allocate(5 * kMiB);
  CHECK(address(five) == c_at);  // of two 6 MiB blocks, the lower one
  CHECK(device->reserves == 1);
}

TEST_CASE("empty_cache gives back free segments and keeps those in use", "[memory][caching]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  DataPtr kept = alloc->allocate(100);
  alloc->allocate(3 * kMiB);
  alloc->allocate(30 * kMiB);  // too large for the cached 20 MiB segment
  REQUIRE(device->live_segments.size() == 3);
  alloc->empty_cache();
  CHECK(device->live_segments.size() == 1);
  const MemoryStats s = alloc->stats();
  CHECK(s.reserved_bytes == int64_t(2 * kMiB));
  CHECK(s.num_releases == 2);
  CHECK(s.current_bytes == 100);
  CHECK(device->bad_releases == 0);
}

TEST_CASE("statistics are exact after a scripted sequence", "[memory][caching]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  DataPtr a = alloc->allocate(1000);           // small segment 1 (2 MiB), block 1024
  DataPtr c = alloc->allocate(12 * kMiB + 1);  // its own segment of 14 MiB, block 12 MiB + 512
  DataPtr b = alloc->allocate(3 * kMiB);       // c's 2 MiB - 512 rest is too small: a 20 MiB segment
  b = DataPtr();
  DataPtr d = alloc->allocate(2 * kMiB);  // from b's merged free block: a cache hit
  c = DataPtr();
  const MemoryStats s = alloc->stats();
  CHECK(s.current_bytes == int64_t(1000 + 2 * kMiB));
  CHECK(s.peak_bytes == int64_t(1000 + 3 * kMiB + 12 * kMiB + 1));
  CHECK(s.active_bytes == int64_t(1024 + 2 * kMiB));
  CHECK(s.reserved_bytes == int64_t(36 * kMiB));
  CHECK(s.cached_free_bytes == int64_t(36 * kMiB - 1024 - 2 * kMiB));
  CHECK(s.largest_free_block == int64_t(18 * kMiB));  // the rest of the 20 MiB segment
  CHECK(s.fragmentation == Approx(1.0 - double(18 * kMiB) / double(36 * kMiB - 1024 - 2 * kMiB)));
  CHECK(s.num_reserves == 3);
  CHECK(s.num_releases == 0);
  CHECK(s.num_allocs == 4);
  CHECK(s.num_frees == 2);
  CHECK(s.cache_hits == 1);
  CHECK(s.num_cache_flushes == 0);
  CHECK(s.limit_bytes == 0);
}

TEST_CASE("destroying the allocator gives every segment back", "[memory][caching]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  std::vector<std::string> reports;
  CachingAllocatorOptions options;
  options.report = [&](const std::string& message) { reports.push_back(message); };
  {
    auto alloc = make_caching_allocator(device, options);
    DataPtr a = alloc->allocate(100);
    DataPtr b = alloc->allocate(5 * kMiB);
    alloc->allocate(30 * kMiB);
    CHECK(device->live_segments.size() == 3);
  }
  CHECK(device->live_segments.empty());
  CHECK(device->used == 0);
  CHECK(device->bad_releases == 0);
  CHECK(reports.empty());
}

TEST_CASE("blocks still in use at destruction are reported, and their pointers stay safe to drop",
          "[memory][caching][errors]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  std::vector<std::string> reports;
  CachingAllocatorOptions options;
  options.report = [&](const std::string& message) { reports.push_back(message); };
  auto alloc = make_caching_allocator(device, options);
  DataPtr leaked = alloc->allocate(100);
  DataPtr also = alloc->allocate(3 * kMiB);
  alloc.reset();
  CHECK(device->live_segments.empty());
  REQUIRE(reports.size() == 1);
  CHECK_THAT(reports[0], Catch::Contains("cuda:0") && Catch::Contains("2 allocation(s)") &&
                             Catch::Contains(std::to_string(100 + 3 * kMiB) + " bytes still in use"));
  leaked = DataPtr();  // the allocator is gone: only the bookkeeping is freed
  also = DataPtr();
  CHECK(device->bad_releases == 0);
}
