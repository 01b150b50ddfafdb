#include "rendezvous.hpp"

#include "kiln/util/str_cat.hpp"

namespace kiln::dist {
namespace {

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

std::shared_ptr<Rendezvous> make_rendezvous(const ProcessGroupOptions& o) {
  auto r = std::make_shared<Rendezvous>();
  uint16_t port = o.master_port;
  std::string host = o.master_addr;
  if (o.rank == 0) {
    r->server = std::make_unique<TcpStoreServer>(
        TcpStoreServer::Options{.bind_address = is_loopback(o.master_addr) ? "127.0.0.1" : "0.0.0.0",
                                .port = o.world_size == 1 ? uint16_t(0) : o.master_port});
    port = r->server->port();
    if (o.world_size == 1) host = "127.0.0.1";
  }
  r->store = std::make_shared<TcpStore>(
      TcpStore::Options{.host = host, .port = port, .rank = o.rank, .timeout = o.timeout});
  return r;
}

}  // namespace

std::shared_ptr<Rendezvous> RendezvousCache::meet(const ProcessGroupOptions& o) {
  if (o.world_size == 1) return make_rendezvous(o);
  std::lock_guard lock(mutex_);
  std::weak_ptr<Rendezvous>& slot = live_[str_cat(o.master_addr, ":", o.master_port, "/", o.rank)];
  std::shared_ptr<Rendezvous> r = slot.lock();
  if (!r) {
    r = make_rendezvous(o);
    slot = r;
  }
  return r;
}

}  // namespace kiln::dist
