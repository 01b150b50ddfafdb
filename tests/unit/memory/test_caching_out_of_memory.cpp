// Out of memory: the cache is emptied and the request retried once; a
// second failure names the request, the device and the statistics. The cap
// counts like the device's own limit.
#include <catch2/catch.hpp>

#include "caching_test_support.hpp"
#include "kiln/error.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// The message of the out-of-memory error that allocating `bytes` throws.
std::string out_of_memory_message(CachingAllocator& alloc, size_t bytes) {
  try {
    alloc.allocate(bytes);
  } catch (const Error& e) {
    CHECK(e.status() == Status::out_of_memory);
    return e.what();
  }
  FAIL("allocating " << bytes << " bytes succeeded");
  return "";
}

}  // namespace

TEST_CASE("a refused segment empties the cache and the retry succeeds", "[memory][caching][oom]") {
  auto device = std::make_shared<FakeDevice>(23 * kMiB);
  auto alloc = make_caching_allocator(device);
  alloc->allocate(1000);                     // leaves a cached 2 MiB segment
  DataPtr big = alloc->allocate(21 * kMiB);  // needs 22 MiB: only once the cache is gone
  CHECK(big.get() != nullptr);
  CHECK(device->refused_reserves == 1);
  const MemoryStats s = alloc->stats();
  CHECK(s.num_cache_flushes == 1);
  CHECK(s.num_releases == 1);
  CHECK(s.reserved_bytes == int64_t(22 * kMiB));
  CHECK(s.num_reserves == 2);
}

TEST_CASE("a request the device cannot hold even with an empty cache names the size, device and statistics",
          "[memory][caching][oom][errors]") {
  auto device = std::make_shared<FakeDevice>(23 * kMiB);
  auto alloc = make_caching_allocator(device);
  DataPtr held = alloc->allocate(1000);
  const std::string message = out_of_memory_message(*alloc, 22 * kMiB);
  INFO(message);
  CHECK_THAT(message, Catch::StartsWith("cuda:0: out of memory allocating 23068672 bytes (22.0 MiB)"));
  CHECK_THAT(message, Catch::Contains("kiln holds 1 allocation(s) on this device") &&
                          Catch::Contains("allocated 1000.0 B") && Catch::Contains("reserved 2.0 MiB") &&
                          Catch::Contains("free cached 2.0 MiB") && Catch::Contains("cap none") &&
                          Catch::Contains("peak allocated 1000.0 B") &&
                          Catch::Contains("the fake device has 22020096 bytes free") &&
                          Catch::Contains("the cache was emptied and the request retried"));
  CHECK(device->refused_reserves == 2);
  CHECK(alloc->stats().num_cache_flushes == 1);
  // The failure changed nothing: the allocator goes on serving.
  DataPtr next = alloc->allocate(20 * kMiB);
  CHECK(next.get() != nullptr);
  CHECK(alloc->stats().current_bytes == int64_t(1000 + 20 * kMiB));
}

TEST_CASE("a request too large to round is out of memory, not an overflow", "[memory][caching][oom][errors]") {
  auto device = std::make_shared<FakeDevice>(23 * kMiB);
  auto alloc = make_caching_allocator(device);
  const size_t absurd = ~size_t(0);
  const std::string message = out_of_memory_message(*alloc, absurd);
  CHECK_THAT(message, Catch::Contains(std::to_string(absurd) + " bytes") && Catch::Contains("16.0 EiB") &&
                          Catch::Contains("the size overflows"));
  CHECK(device->reserves + device->refused_reserves == 0);
}

TEST_CASE("reserved memory stays under the cap", "[memory][caching][oom]") {
  auto device = std::make_shared<FakeDevice>(100 * kMiB);
  CachingAllocatorOptions options;
  options.limit_bytes = 25 * kMiB;
  auto alloc = make_caching_allocator(device, options);
  DataPtr first = alloc->allocate(20 * kMiB);
  const std::string message = out_of_memory_message(*alloc, 6 * kMiB);  // another 20 MiB segment
  CHECK_THAT(message, Catch::Contains("cap 25.0 MiB") && Catch::Contains("reserved 20.0 MiB"));
  CHECK(device->reserves == 1);
  CHECK(device->refused_reserves == 0);  // the cap refused it before the device was asked
  DataPtr small = alloc->allocate(1);    // a 2 MiB segment still fits
  const MemoryStats s = alloc->stats();
  CHECK(s.reserved_bytes == int64_t(22 * kMiB));
  CHECK(s.limit_bytes == int64_t(25 * kMiB));
}

TEST_CASE("reaching the cap empties the cache and retries like a refusal", "[memory][caching][oom]") {
  auto device = std::make_shared<FakeDevice>(100 * kMiB);
  CachingAllocatorOptions options;
  options.limit_bytes = 21 * kMiB;
  auto alloc = make_caching_allocator(device, options);
  alloc->allocate(1);                          // a cached 2 MiB segment
  DataPtr large = alloc->allocate(19 * kMiB);  // a 20 MiB segment fits only without it
  const MemoryStats s = alloc->stats();
  CHECK(s.num_cache_flushes == 1);
  CHECK(s.reserved_bytes == int64_t(20 * kMiB));
  CHECK(device->live_segments.size() == 1);
}

TEST_CASE("the retry also waits for blocks held for other streams", "[memory][caching][oom][streams]") {
  auto device = std::make_shared<FakeDevice>(22 * kMiB);
  auto alloc = make_caching_allocator(device);
  DataPtr p = alloc->allocate(20 * kMiB);
  alloc->record_stream(p.get(), 7);
  p = DataPtr();
  // Only the held segment could serve it: the cache flush waits for the event.
  DataPtr again = alloc->allocate(20 * kMiB);
  CHECK(device->waits == 1);
  CHECK(alloc->stats().num_cache_flushes == 1);
  CHECK(device->reserves == 2);  // the held segment was released and a new one reserved
}

TEST_CASE("a device failure other than out of memory reaches the caller and changes nothing",
          "[memory][caching][errors]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  device->broken = true;
  try {
    alloc->allocate(100);
    FAIL("allocating on a broken device succeeded");
  } catch (const Error& e) {
    CHECK(e.status() == Status::internal);
    CHECK_THAT(e.what(), Catch::Equals("the fake device is broken"));
  }
  const MemoryStats s = alloc->stats();
  CHECK(s.num_allocs == 0);
  CHECK(s.reserved_bytes == 0);
  CHECK(s.num_cache_flushes == 0);  // no retry: emptying the cache cannot mend the device
  device->broken = false;
  DataPtr p = alloc->allocate(100);
  CHECK(p.get() != nullptr);
}
