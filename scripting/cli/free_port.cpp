// Port 0 lets the system choose: launches running at the same time (tests
// in parallel) never agree on the same port, as a fixed default would.
#include "free_port.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <stdexcept>

namespace kiln::cli {

uint16_t find_free_port(const std::string& address) {
  namespace asio = boost::asio;
  using asio::ip::tcp;
  asio::io_context io;
  boost::system::error_code ec;
  const tcp::resolver::results_type endpoints = tcp::resolver(io).resolve(address, "0", ec);
  if (ec) throw std::runtime_error(ec.message());
  for (const auto& entry : endpoints) {
    const tcp::endpoint endpoint = entry.endpoint();
    tcp::acceptor acceptor(io);
    if (acceptor.open(endpoint.protocol(), ec) || acceptor.bind(endpoint, ec)) continue;
    const uint16_t port = acceptor.local_endpoint(ec).port();
    if (!ec) return port;
  }
  throw std::runtime_error(ec ? ec.message() : "no address to bind");
}

}  // namespace kiln::cli
