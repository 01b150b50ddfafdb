// The store server: listens, accepts, and runs every connection on one
// io_context driven by one thread of its own. The connections' work is in
// store_session.cpp, the keys' in key_value_table.cpp.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "kiln/dist/store.hpp"
#include "kiln/error.hpp"
#include "store_session.hpp"

namespace kiln::dist {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

struct TcpStoreServer::Impl {
  explicit Impl(const Options& options);
  void listen(const Options& options);
  void accept();
  // On the server's thread: closes the listener and every connection.
  void shut_down();

  // First, so that it goes last: the sockets and timers below need it.
  asio::io_context io;
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_retry{io};
  StoreServerState state;
  uint16_t port = 0;
  std::thread thread;
};

TcpStoreServer::Impl::Impl(const Options& options) {
  KILN_CHECK(options.max_message_bytes >= 64, Status::invalid_argument,
             "store server: max_message_bytes is ", options.max_message_bytes,
             "; a store message needs at least 64 bytes");
  state.max_message_bytes = options.max_message_bytes;
  listen(options);
  port = acceptor.local_endpoint().port();
  accept();
}

void TcpStoreServer::Impl::listen(const Options& options) {
  const std::string where = str_cat(options.bind_address, ":", options.port);
  error_code ec;
  tcp::resolver resolver(io);
  const auto found = resolver.resolve(options.bind_address, std::to_string(options.port),
                                      tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  KILN_CHECK(!ec && !found.empty(), Status::invalid_argument, "store server: cannot resolve the address ", where,
             ": ", ec ? ec.message() : std::string("no address"));
  const tcp::endpoint endpoint = found.begin()->endpoint();
  const auto check = [&](const char* step) {
    KILN_CHECK(!ec, Status::io, "store server: cannot listen on ", where, " (", step, "): ", ec.message());
  };
  acceptor.open(endpoint.protocol(), ec);
  check("open");
  // A restarted job takes its port back although the last one's
  // connections linger in TIME_WAIT.
  acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  check("SO_REUSEADDR");
  acceptor.bind(endpoint, ec);
  check("bind");
  acceptor.listen(tcp::socket::max_listen_connections, ec);
  check("listen");
}

void TcpStoreServer::Impl::accept() {
  acceptor.async_accept([this](error_code ec, tcp::socket socket) {
    if (!acceptor.is_open()) return;
    if (ec) {
      // Out of file descriptors, or a connection reset before it was
      // taken: try again shortly instead of spinning.
      accept_retry.expires_after(std::chrono::milliseconds(50));
      accept_retry.async_wait([this](error_code e) {
        if (!e) accept();
      });
      return;
    }
    auto session = std::make_shared<StoreSession>(std::move(socket), state);
    state.sessions.insert(session);
    session->start();
    accept();
  });
}

void TcpStoreServer::Impl::shut_down() {
  error_code ignored;
  acceptor.close(ignored);
  accept_retry.cancel();
  const auto sessions = state.sessions;
  for (const auto& session : sessions) session->close();
  // Handlers still queued are destroyed with the io_context, never run.
  io.stop();
}

TcpStoreServer::TcpStoreServer(const Options& options) : impl_(std::make_unique<Impl>(options)) {
  impl_->thread = std::thread([impl = impl_.get()] {
    // A handler that throws must not end the process (std::thread would
    // call std::terminate): the server goes on serving.
    for (;;) {
      try {
        impl->io.run();
        return;
      } catch (...) {
      }
    }
  });
}

TcpStoreServer::~TcpStoreServer() {
  asio::post(impl_->io, [impl = impl_.get()] { impl->shut_down(); });
  impl_->thread.join();
}

uint16_t TcpStoreServer::port() const { return impl_->port; }

}  // namespace kiln::dist
