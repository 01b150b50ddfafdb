// Helpers for the store's tests: servers on a free local port, clients
// with short timeouts, and raw sockets that speak the wire format by hand
// (so the tests check the format itself, not just client against server).
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

#include "kiln/dist/store.hpp"
#include "kiln/error.hpp"

namespace kiln::test {

using namespace std::chrono_literals;
using dist::Milliseconds;
using dist::TcpStore;
using dist::TcpStoreServer;
using Clock = std::chrono::steady_clock;

inline TcpStoreServer::Options local_server(uint16_t port = 0, size_t max_message_bytes = size_t(64) << 20) {
  return {.bind_address = "127.0.0.1", .port = port, .max_message_bytes = max_message_bytes};
}

inline TcpStore::Options client_of(const TcpStoreServer& server, int rank = -1, Milliseconds timeout = 2000ms) {
  return {.host = "127.0.0.1", .port = server.port(), .rank = rank, .timeout = timeout};
}

// A port nothing listens on right now.
inline uint16_t free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

inline int64_t ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

// Calls `done` every 10 ms until it is true or `timeout` passes.
inline bool eventually(const std::function<bool()>& done, Milliseconds timeout = 1000ms) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// Little-endian wire fields, written by hand.
inline std::string le32(uint32_t v) {
  std::string out;
  for (int i = 0; i < 4; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
  return out;
}
inline std::string frame(const std::string& body) { return le32(uint32_t(body.size())) + body; }
// HELLO: opcode 1, u32 protocol version 1, i32 rank.
inline std::string hello_frame(int rank) { return frame("\x01" + le32(1) + le32(uint32_t(rank))); }

// A raw client connection with bounded blocking reads.
class RawClient {
 public:
  explicit RawClient(uint16_t port) : socket_(io_) {
    socket_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  }
  void send(const std::string& bytes) { boost::asio::write(socket_, boost::asio::buffer(bytes)); }
  // Everything received until the server closes the connection; sets
  // `closed` false when it is still open after `timeout`.
  std::string read_until_closed(bool& closed, Milliseconds timeout = 1000ms) {
    std::string received;
    char chunk[4096];
    closed = false;
    bool reading = true;
    std::function<void()> next = [&] {
      socket_.async_read_some(boost::asio::buffer(chunk), [&](boost::system::error_code ec, size_t n) {
        received.append(chunk, n);
        if (ec) {
          closed = true;
          reading = false;
        } else {
          next();
        }
      });
    };
    next();
    io_.restart();
    io_.run_for(timeout);
    if (reading) {
      socket_.close();
      io_.restart();
      io_.run();
    }
    return received;
  }
  // One whole reply frame (without its length); throws when none comes
  // within `timeout`.
  std::string read_frame(Milliseconds timeout = 1000ms) {
    const std::string prefix = read_exactly(4, timeout);
    const uint32_t n = uint32_t(uint8_t(prefix[0])) | uint32_t(uint8_t(prefix[1])) << 8 |
                       uint32_t(uint8_t(prefix[2])) << 16 | uint32_t(uint8_t(prefix[3])) << 24;
    return read_exactly(n, timeout);
  }
  void close() { socket_.close(); }

 private:
  std::string read_exactly(size_t n, Milliseconds timeout) {
    std::string bytes(n, '\0');
    bool done = false;
    boost::system::error_code result;
    boost::asio::async_read(socket_, boost::asio::buffer(bytes), [&](boost::system::error_code ec, size_t) {
      result = ec;
      done = true;
    });
    io_.restart();
    io_.run_for(timeout);
    if (!done) {
      socket_.close();
      io_.restart();
      io_.run();
      throw std::runtime_error("no reply from the store server");
    }
    if (result) throw std::runtime_error("reading from the store server: " + result.message());
    return bytes;
  }

  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
};

// The status of `call`'s kiln::Error, and its message in `message`.
inline Status status_of(const std::function<void()>& call, std::string* message = nullptr) {
  try {
    call();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.status();
  }
  return Status::ok;
}

}  // namespace kiln::test
