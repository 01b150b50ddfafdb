// The rendezvous store: a small key-value service through which the ranks
// of a distributed job meet (the role of PyTorch's TCPStore). Rank 0 serves
// it at MASTER_ADDR:MASTER_PORT; every rank, rank 0 included, talks to it as
// a client. Process groups keep their bootstrap data in it (the NCCL unique
// id, Gloo's pair addresses) and ask it, when a collective fails, which
// peer is gone.
//
//   TcpStoreServer server(TcpStoreServer::Options{.port = 29500});   // rank 0 only
//   TcpStore store({.host = "127.0.0.1", .port = 29500, .rank = 1});
//   store.set("nccl/id", bytes);
//   std::string id = store.get("nccl/id");          // waits for the key
//   int64_t arrived = store.add("barrier/0", 1);    // atomic counter
//
// Every call waits at most the store's timeout (or the one it is given) and
// then throws kiln::Error with Status::timeout naming the call and the key.
// A server that cannot be reached, or goes away, is Status::peer. Values are
// bytes (std::string holds any).
//
// Errors, by status:
//   timeout           get/wait ran out of time (the server said so; the
//                     connection goes on), connecting took longer than the
//                     timeout, or no reply came within the timeout plus 2 s
//                     (the server hangs; the connection is given up)
//   peer              the connection closed, or was given up earlier
//   invalid_argument  the server refused the request and goes on: add on a
//                     value that is not an integer, a request larger than
//                     the server's max_message_bytes
//   internal          the server found the request malformed and closed
//   unsupported       the server speaks another protocol version
//   io                (server) the address cannot be listened on
// A connection that is given up or closed is not opened again: every later
// call throws Status::peer; make a new TcpStore.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::dist {

using Milliseconds = std::chrono::milliseconds;

class Store {
 public:
  virtual ~Store() = default;

  virtual void set(const std::string& key, const std::string& value) = 0;
  // The value of `key`, waiting until some client sets it.
  virtual std::string get(const std::string& key) = 0;
  // Without waiting: nullopt when the key is not set.
  virtual std::optional<std::string> try_get(const std::string& key) = 0;
  // Returns when every key is set; throws Status::timeout naming the keys
  // still missing after `timeout`.
  virtual void wait(std::span<const std::string> keys, Milliseconds timeout) = 0;
  void wait(std::span<const std::string> keys) { wait(keys, timeout()); }
  // Adds `delta` to the integer stored at `key` (a missing key is 0) and
  // returns the new value, atomically. The value is kept as decimal text:
  // get() of the key returns "4000".
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // Sets `key` to `desired` when its value is `expected` (an empty
  // `expected` also matches a missing key); returns the value the key holds
  // afterwards, whichever way it went: the empty string for a key that is
  // still missing (PyTorch's TCPStore returns `expected` there).
  virtual std::string compare_set(const std::string& key, const std::string& expected,
                                  const std::string& desired) = 0;
  // Deletes `key`; false when it was not set.
  virtual bool remove(const std::string& key) = 0;
  // The ranks whose client connection closed without saying goodbye (their
  // process ended or was killed), in the order the server saw them go.
  virtual std::vector<int> departed_ranks() = 0;

  Milliseconds timeout() const { return timeout_; }
  void set_timeout(Milliseconds t) { timeout_ = t; }

 protected:
  explicit Store(Milliseconds timeout) : timeout_(timeout) {}

 private:
  Milliseconds timeout_;
};

// The client: one TCP connection to the server; several threads may call
// it at once (their requests are serialised on the connection). A thread
// waiting in get() or wait() holds the connection meanwhile: the value it
// waits for must come through another TcpStore. It connects with retries and
// exponential back-off (10 ms doubling to 1 s) until the timeout, so ranks
// may start in any order. It introduces itself with its rank; destroying it
// says goodbye (waiting at most 1 s for the server to take note), so only
// a process that dies shows up in departed_ranks().
class TcpStore final : public Store {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    uint16_t port = 0;
    int rank = -1;  // -1: a client that is no rank (a tool, a test)
    Milliseconds timeout = std::chrono::seconds(300);
  };
  explicit TcpStore(const Options& options);
  ~TcpStore() override;
  TcpStore(const TcpStore&) = delete;
  TcpStore& operator=(const TcpStore&) = delete;

  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key) override;
  std::optional<std::string> try_get(const std::string& key) override;
  using Store::wait;
  void wait(std::span<const std::string> keys, Milliseconds timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  std::string compare_set(const std::string& key, const std::string& expected, const std::string& desired) override;
  bool remove(const std::string& key) override;
  std::vector<int> departed_ranks() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The server: listens on `port` (0: a free port, see port()) and serves
// any number of clients on a thread of its own until destroyed; the
// destructor closes every connection (clients waiting get Status::peer) and
// joins the thread. A client that sends a malformed message, or one larger
// than max_message_bytes, is answered with an error and disconnected; the
// server and the other clients go on. The port is bound with SO_REUSEADDR,
// so a restarted job takes it back at once.
class TcpStoreServer {
 public:
  struct Options {
    std::string bind_address = "0.0.0.0";
    uint16_t port = 0;
    size_t max_message_bytes = size_t(64) << 20;
  };
  explicit TcpStoreServer(const Options& options);
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  uint16_t port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::dist
