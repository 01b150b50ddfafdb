// The rendezvous store's calls, client against server on a local port:
// values, waiting, counters, compare-and-set, and the timeout messages.
#include <catch2/catch.hpp>

#include <algorithm>
#include <future>
#include <thread>
#include <vector>

#include "store_test_support.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("store set, get, try_get and remove", "[store]") {
  TcpStoreServer server(local_server());
  TcpStore store(client_of(server));
  CHECK_FALSE(store.try_get("a").has_value());
  store.set("a", "1");
  CHECK(store.get("a") == "1");
  CHECK(store.try_get("a") == std::optional<std::string>("1"));
  store.set("a", "2");
  CHECK(store.get("a") == "2");
  CHECK(store.remove("a"));
  CHECK_FALSE(store.remove("a"));
  CHECK_FALSE(store.try_get("a").has_value());
  // Another client sees the same table.
  store.set("shared", "yes");
  TcpStore other(client_of(server));
  CHECK(other.get("shared") == "yes");
}

TEST_CASE("store values with NUL and any other byte round-trip", "[store]") {
  TcpStoreServer server(local_server());
  TcpStore store(client_of(server));
  std::string binary;
  for (int i = 0; i < 256; ++i) binary.push_back(char(i));
  binary += std::string("\0\0tail\0", 7);
  const std::string key("k\0ey", 4);
  store.set(key, binary);
  CHECK(store.get(key) == binary);
  CHECK(store.try_get(key) == std::optional<std::string>(binary));
  CHECK_FALSE(store.try_get("k").has_value());  // the key is not cut at its NUL
  store.set("empty", "");
  CHECK(store.get("empty").empty());
}

TEST_CASE("store get waits for a value another client sets later", "[store]") {
  TcpStoreServer server(local_server());
  TcpStore waiter(client_of(server));
  TcpStore setter(client_of(server));
  const auto start = Clock::now();
  std::thread later([&] {
    std::this_thread::sleep_for(150ms);
    setter.set("id", "nccl-unique-id");
  });
  const std::string value = waiter.get("id");
  later.join();
  CHECK(value == "nccl-unique-id");
  CHECK(ms_since(start) >= 140);
}

TEST_CASE("store get times out naming the key, and the connection goes on", "[store]") {
  TcpStoreServer server(local_server());
  TcpStore store(client_of(server, -1, 200ms));
  const auto start = Clock::now();
  std::string message;
  CHECK(status_of([&] { store.get("never"); }, &message) == Status::timeout);
  CHECK(ms_since(start) >= 190);
  CHECK(ms_since(start) < 1000);
  CHECK(message == "store get 'never': timed out after 200 ms waiting for the key");
  // The server answered the timeout itself: the connection is in step.
  store.set("never", "now");
  CHECK(store.get("never") == "now");
}

TEST_CASE("store wait returns once every key is set and names the missing ones on timeout", "[store]") {
  TcpStoreServer server(local_server());
  TcpStore store(client_of(server));
  TcpStore setter(client_of(server));
  const std::vector<std::string> keys = {"rank/0", "rank/1", "rank/2"};
  store.set("rank/0", "a");
  std::thread later([&] {
    std::this_thread::sleep_for(50ms);
    setter.set("rank/2", "c");
    std::this_thread::sleep_for(50ms);
    setter.set("rank/1", "b");
  });
  store.wait(keys, 1000ms);
  later.join();
  CHECK(store.get("rank/1") == "b");

  const std::vector<std::string> more = {"rank/0", "rank/3", "rank/1", "rank/4"};
  const auto start = Clock::now();
  std::string message;
  CHECK(status_of([&] { store.wait(more, 200ms); }, &message) == Status::timeout);
  CHECK(ms_since(start) >= 190);
  CHECK(ms_since(start) < 1000);
  CHECK(message == "store wait: timed out after 200 ms waiting for 2 of 4 keys: 'rank/3', 'rank/4'");
  // The store's own timeout is the default.
  store.set_timeout(100ms);
  CHECK(status_of([&] { store.wait(more); }) == Status::timeout);
  store.wait(keys);
}

TEST_CASE("store add from 8 clients, 500 times each, counts exactly 4000", "[store]") {
  TcpStoreServer server(local_server());
  constexpr int kClients = 8;
  constexpr int kIncrements = 500;
  std::vector<std::thread> threads;
  std::vector<int64_t> largest(kClients, 0);
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      TcpStore store(client_of(server, c));
      for (int i = 0; i < kIncrements; ++i) largest[size_t(c)] = std::max(largest[size_t(c)], store.add("count", 1));
    });
  }
  for (std::thread& t : threads) t.join();
  TcpStore store(client_of(server));
  CHECK(store.get("count") == "4000");
  CHECK(*std::max_element(largest.begin(), largest.end()) == 4000);
  CHECK(store.add("count", -4000) == 0);
  CHECK(store.add("fresh", 0) == 0);  // a missing key counts as 0

  // Threads sharing one client take turns on its connection.
  std::vector<std::thread> sharing;
  for (int t = 0; t < 4; ++t) {
    sharing.emplace_back([&] {
      for (int i = 0; i < 100; ++i) store.add("shared", 2);
    });
  }
  for (std::thread& t : sharing) t.join();
  CHECK(store.get("shared") == "800");
}

TEST_CASE("store add on a value that is no integer is an error naming the key", "[store]") {
  TcpStoreServer server(local_server());
  TcpStore store(client_of(server));
  store.set("name", "abc");
  std::string message;
  CHECK(status_of([&] { store.add("name", 1); }, &message) == Status::invalid_argument);
  CHECK(message == "store add 'name': key 'name' holds 'abc', which is not a 64-bit decimal integer");
  store.set("big", "9223372036854775807");
  CHECK(status_of([&] { store.add("big", 1); }, &message) == Status::invalid_argument);
  CHECK_THAT(message, Catch::Contains("overflows"));
  CHECK(store.get("name") == "abc");  // the connection goes on
}

TEST_CASE("store compare_set: a match sets, a mismatch does not, empty expected matches a missing key", "[store]") {
  TcpStoreServer server(local_server());
  TcpStore store(client_of(server));
  CHECK(store.compare_set("leader", "", "rank 3") == "rank 3");  // missing, empty expected: set
  CHECK(store.compare_set("leader", "", "rank 5") == "rank 3");  // held: empty no longer matches
  CHECK(store.compare_set("leader", "rank 4", "rank 5") == "rank 3");
  CHECK(store.compare_set("leader", "rank 3", "rank 5") == "rank 5");
  CHECK(store.get("leader") == "rank 5");
  CHECK(store.compare_set("absent", "something", "x").empty());  // still missing
  CHECK_FALSE(store.try_get("absent").has_value());
}

TEST_CASE("store compare_set wakes a client waiting for the key", "[store]") {
  TcpStoreServer server(local_server());
  TcpStore waiter(client_of(server));
  TcpStore setter(client_of(server));
  auto value = std::async(std::launch::async, [&] { return waiter.get("flag"); });
  std::this_thread::sleep_for(50ms);
  setter.compare_set("flag", "", "up");
  REQUIRE(value.wait_for(1s) == std::future_status::ready);
  CHECK(value.get() == "up");
}
