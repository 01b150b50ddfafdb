// The rendezvous store under faults: ranks starting in any order, no
// server, peers that vanish without goodbye, clients that send what is not
// a store request, and a server that goes away under a waiting client.
#include <catch2/catch.hpp>

#include <dirent.h>

#include <future>
#include <memory>
#include <thread>

#include "store_test_support.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

int threads_in_process() {
  int n = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (const dirent* entry = readdir(dir)) n += entry->d_name[0] != '.';
    closedir(dir);
  }
  return n;
}

// A fatal reply (status 3) whose message contains `words`, then the server
// closes the connection.
void check_disconnected_with(RawClient& raw, const std::string& words) {
  bool closed = false;
  const std::string received = raw.read_until_closed(closed);
  CHECK(closed);
  REQUIRE(received.size() > 5);
  CHECK(received[4] == '\x03');
  CHECK_THAT(received, Catch::Contains(words));
}

}  // namespace

TEST_CASE("store client started 300 ms before its server still connects", "[store]") {
  const uint16_t port = free_port();
  auto client = std::async(std::launch::async, [port] {
    TcpStore store({.host = "127.0.0.1", .port = port, .rank = 0, .timeout = 1500ms});
    store.set("early", "1");
    return store.get("late");
  });
  std::this_thread::sleep_for(300ms);
  TcpStoreServer server(local_server(port));
  TcpStore store(client_of(server, 1));
  CHECK(store.get("early") == "1");
  store.set("late", "2");
  REQUIRE(client.wait_for(2s) == std::future_status::ready);
  CHECK(client.get() == "2");
}

TEST_CASE("store client without a server fails with Status::timeout naming host and port", "[store]") {
  const uint16_t port = free_port();
  const auto start = Clock::now();
  std::string message;
  const Status status = status_of([&] { TcpStore({.host = "127.0.0.1", .port = port, .timeout = 200ms}); }, &message);
  CHECK(status == Status::timeout);
  CHECK(ms_since(start) >= 190);
  CHECK(ms_since(start) < 1000);
  CHECK_THAT(message, Catch::Contains("127.0.0.1:" + std::to_string(port)));
  CHECK_THAT(message, Catch::Contains("refused"));
}

TEST_CASE("store names a rank whose connection drops without goodbye as departed", "[store]") {
  TcpStoreServer server(local_server());
  TcpStore observer(client_of(server));
  {
    TcpStore leaves_politely(client_of(server, 3));
    leaves_politely.set("x", "1");
  }
  CHECK(observer.departed_ranks().empty());
  {
    RawClient no_rank(server.port());  // a tool, not a rank
    no_rank.send(hello_frame(-1));
    CHECK(no_rank.read_frame() == std::string("\x00", 1) + std::string("\x00\x00\x00\x04\x00\x00\x00\x00", 8));
  }
  {
    RawClient dies(server.port());
    dies.send(hello_frame(5));
    dies.read_frame();
    // Its process ends here: the socket closes without BYE.
  }
  CHECK(eventually([&] { return !observer.departed_ranks().empty(); }));
  CHECK(observer.departed_ranks() == std::vector<int>{5});
}

TEST_CASE("store server disconnects a client that announces an oversized message and serves the others",
          "[store]") {
  TcpStoreServer server(local_server(0, 4096));
  TcpStore store(client_of(server));
  RawClient raw(server.port());
  raw.send(le32(uint32_t(1) << 30));  // 1 GiB announced, none of it sent
  check_disconnected_with(raw, "a message of 1073741824 bytes: the server takes 1 to 4096 bytes");
  store.set("still", "serving");
  CHECK(store.get("still") == "serving");
  // The client refuses a request the server would refuse, and stays connected.
  std::string message;
  CHECK(status_of([&] { store.set("big", std::string(5000, 'x')); }, &message) == Status::invalid_argument);
  CHECK_THAT(message, Catch::Contains("larger than the store server takes (4096 bytes"));
  CHECK(store.get("still") == "serving");
}

TEST_CASE("store server disconnects a client that sends garbage and serves the others", "[store]") {
  TcpStoreServer server(local_server());
  TcpStore store(client_of(server, 0));
  {
    RawClient raw(server.port());
    raw.send(frame("\xee garbage"));
    check_disconnected_with(raw, "unknown opcode 238");
  }
  {
    // SET whose key claims 100 bytes of the 3 the frame holds.
    RawClient raw(server.port());
    raw.send(frame("\x03" + le32(100) + "abc"));
    check_disconnected_with(raw, "the message ends inside its key");
  }
  {
    // GET with bytes after its last field.
    RawClient raw(server.port());
    raw.send(frame("\x04" + le32(1) + "k" + std::string(8, '\0') + "extra"));
    check_disconnected_with(raw, "the GET message has 5 bytes after its last field");
  }
  {
    // Another protocol altogether: its first bytes read as a huge length.
    RawClient raw(server.port());
    raw.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    check_disconnected_with(raw, "bytes: the server takes 1 to");
  }
  store.set("after", "garbage");
  CHECK(store.get("after") == "garbage");
  CHECK(store.departed_ranks().empty());
}

TEST_CASE("store client waiting in get fails with Status::peer when the server goes away", "[store]") {
  // ThreadSanitizer starts a helper thread of its own at a process's first
  // thread; one started and joined first keeps it out of the difference.
  std::thread([] {}).join();
  const int threads_before = threads_in_process();
  auto server = std::make_unique<TcpStoreServer>(local_server());
  TcpStore store(client_of(*server, 0, 5000ms));
  auto waiting = std::async(std::launch::async, [&] {
    std::string message;
    const Status status = status_of([&] { store.get("never"); }, &message);
    return std::make_pair(status, message);
  });
  std::this_thread::sleep_for(100ms);
  const std::string address = "127.0.0.1:" + std::to_string(server->port());
  const auto start = Clock::now();
  server.reset();
  REQUIRE(waiting.wait_for(1s) == std::future_status::ready);
  CHECK(ms_since(start) < 1000);
  const auto [status, message] = waiting.get();
  CHECK(status == Status::peer);
  CHECK(message == "store at " + address + ": the connection closed (the server's process may have ended)");
  // Later calls fail at once, the same way.
  std::string later;
  CHECK(status_of([&] { store.set("k", "v"); }, &later) == Status::peer);
  CHECK_THAT(later, Catch::Contains("was lost earlier"));
  // The server's thread is gone with it (the async task's thread may still be winding down).
  CHECK(eventually([&] { return threads_in_process() <= threads_before; }));
}
