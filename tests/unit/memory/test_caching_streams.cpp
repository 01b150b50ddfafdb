// Stream-ordered reuse: a block that other streams used waits for them
// before it serves another request.
#include <catch2/catch.hpp>
#include <cstdio>

#include "caching_test_support.hpp"
#include "kiln/error.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {
constexpr StreamId kSideStream = 7;
}

TEST_CASE("a block used by another stream is reused only after that stream's event completes",
          "[memory][caching][streams]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  DataPtr used = alloc->allocate(4096);
  char* const at = address(used);
  alloc->record_stream(at, kSideStream);
  used = DataPtr();
  REQUIRE(device->event_streams == std::vector<StreamId>{kSideStream});
  const EventId event = device->last_event();

  MemoryStats s = alloc->stats();
  CHECK(s.current_bytes == 0);
  CHECK(s.active_bytes == 4096);  // still held for the side stream

  DataPtr meanwhile = alloc->allocate(4096);
  CHECK(address(meanwhile) != at);
  meanwhile = DataPtr();

  device->complete(event);
  DataPtr after = alloc->allocate(4096);
  CHECK(address(after) == at);
  CHECK(device->live_events == 0);
  CHECK(device->waits == 0);
  CHECK(device->reserves == 1);
}

TEST_CASE("a block is reused only on the stream that allocated it", "[memory][caching][streams]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  char* const at = address(alloc->allocate(4096, kSideStream));
  DataPtr other = alloc->allocate(4096);  // the default stream
  CHECK(device->reserves == 2);
  CHECK(address(other) != at);
  DataPtr same = alloc->allocate(4096, kSideStream);
  CHECK(address(same) == at);
}

TEST_CASE("recording the allocating stream, or a stream twice, records one event per other stream",
          "[memory][caching][streams]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  DataPtr p = alloc->allocate(100);
  alloc->record_stream(p.get(), 0);
  alloc->record_stream(p.get(), kSideStream);
  alloc->record_stream(p.get(), kSideStream);
  alloc->record_stream(p.get(), 9);
  p = DataPtr();
  CHECK(device->event_streams == std::vector<StreamId>{kSideStream, 9});
}

TEST_CASE("empty_cache waits for pending streams before giving segments back", "[memory][caching][streams]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  DataPtr p = alloc->allocate(3 * kMiB);
  alloc->record_stream(p.get(), kSideStream);
  p = DataPtr();
  alloc->empty_cache();
  CHECK(device->waits == 1);
  CHECK(device->live_events == 0);
  CHECK(device->live_segments.empty());
  CHECK(alloc->stats().active_bytes == 0);
}

TEST_CASE("destruction waits for pending streams before giving segments back", "[memory][caching][streams]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  {
    auto alloc = make_caching_allocator(device);
    DataPtr p = alloc->allocate(100);
    alloc->record_stream(p.get(), kSideStream);
  }
  CHECK(device->waits == 1);
  CHECK(device->live_events == 0);
  CHECK(device->live_segments.empty());
}

TEST_CASE("record_stream refuses a pointer the allocator does not hold", "[memory][caching][streams][errors]") {
  auto device = std::make_shared<FakeDevice>(64 * kMiB);
  auto alloc = make_caching_allocator(device);
  DataPtr p = alloc->allocate(1024);
  int outside = 0;
  for (const void* bad : {static_cast<const void*>(&outside), static_cast<const void*>(address(p) + 8)}) {
    try {
      alloc->record_stream(bad, kSideStream);
      FAIL("record_stream accepted a foreign pointer");
    } catch (const Error& e) {
      CHECK(e.status() == Status::invalid_argument);
      char address_text[32];
      std::snprintf(address_text, sizeof address_text, "%p", bad);
      CHECK_THAT(e.what(), Catch::Contains("record_stream on cuda:0: " + std::string(address_text)) &&
                               Catch::Contains("is not the start of an allocation in use"));
    }
  }
  const char* freed = address(p);
  p = DataPtr();
  CHECK_THROWS_AS(alloc->record_stream(freed, kSideStream), Error);
}
