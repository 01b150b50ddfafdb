// The store client's side of one TCP connection: blocking calls, each of
// which ends by a deadline. An operation still running at its deadline is
// cut off by closing the socket (the connection is out of step after that:
// the caller gives it up) and returns boost::asio::error::timed_out.
//
// It runs its own io_context on the calling thread; the caller serialises
// the calls.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::dist {

class StoreConnection {
 public:
  using Clock = std::chrono::steady_clock;

  StoreConnection(std::string host, uint16_t port);
  // "host:port", for messages.
  const std::string& address() const { return address_; }

  // One attempt to resolve the host and connect; closes what was open.
  boost::system::error_code connect(Clock::time_point deadline);
  boost::system::error_code write(std::string_view bytes, Clock::time_point deadline);
  // Reads one frame into `body`, without its length prefix. A length of 0
  // or above `max_bytes` is boost::asio::error::message_size (nothing is
  // allocated for it).
  boost::system::error_code read_frame(std::string& body, size_t max_bytes, Clock::time_point deadline);
  void close();

 private:
  // Starts an operation with a completion handler from `start` and runs
  // the io_context until it completes or the deadline passes.
  template <class Start>
  boost::system::error_code run(Clock::time_point deadline, Start start);

  boost::asio::io_context io_{1};
  boost::asio::ip::tcp::socket socket_{io_};
  std::string host_;
  uint16_t port_;
  std::string address_;
};

}  // namespace kiln::dist
