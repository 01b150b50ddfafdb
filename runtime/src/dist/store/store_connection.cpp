#include "store_connection.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <optional>

#include "kiln/util/str_cat.hpp"
#include "store_protocol.hpp"

namespace kiln::dist {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

StoreConnection::StoreConnection(std::string host, uint16_t port)
    : host_(std::move(host)), port_(port), address_(str_cat(host_, ":", port_)) {}

template <class Start>
error_code StoreConnection::run(Clock::time_point deadline, Start start) {
  std::optional<error_code> result;
  start([&result](error_code ec, const auto&...) { result = ec; });
  io_.restart();
  while (!result) {
    if (io_.run_one_until(deadline) > 0) continue;
    if (result) break;
    if (Clock::now() < deadline && !io_.stopped()) continue;
    // Cut the operation off: it completes with operation_aborted, and its
    // handler must run before `result` goes out of scope.
    error_code ignored;
    socket_.close(ignored);
    io_.restart();
    io_.run();
    return asio::error::timed_out;
  }
  return *result;
}

error_code StoreConnection::connect(Clock::time_point deadline) {
  close();
  error_code ec;
  tcp::resolver resolver(io_);
  const auto endpoints = resolver.resolve(host_, std::to_string(port_), tcp::resolver::numeric_service, ec);
  if (ec) return ec;
  ec = run(deadline, [&](auto handler) { asio::async_connect(socket_, endpoints, std::move(handler)); });
  if (ec) return ec;
  // Connecting to a free local port can connect the socket to itself
  // (TCP simultaneous open, when the kernel picks that very port as the
  // source): there is no server there.
  error_code local_ec, remote_ec;
  if (socket_.local_endpoint(local_ec) == socket_.remote_endpoint(remote_ec) && !local_ec && !remote_ec) {
    close();
    return asio::error::connection_refused;
  }
  socket_.set_option(tcp::no_delay(true), ec);
  return {};
}

error_code StoreConnection::write(std::string_view bytes, Clock::time_point deadline) {
  return run(deadline, [&](auto handler) { asio::async_write(socket_, asio::buffer(bytes), std::move(handler)); });
}

error_code StoreConnection::read_frame(std::string& body, size_t max_bytes, Clock::time_point deadline) {
  unsigned char prefix[wire::kLengthBytes];
  error_code ec =
      run(deadline, [&](auto handler) { asio::async_read(socket_, asio::buffer(prefix), std::move(handler)); });
  if (ec) return ec;
  const uint32_t length = wire::decode_length(prefix);
  if (length == 0 || length > max_bytes) return asio::error::message_size;
  body.resize(length);
  return run(deadline, [&](auto handler) { asio::async_read(socket_, asio::buffer(body), std::move(handler)); });
}

void StoreConnection::close() {
  error_code ignored;
  if (socket_.is_open()) socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

}  // namespace kiln::dist
