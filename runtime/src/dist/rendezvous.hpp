// Where the ranks of a job meet: the store client every rank holds and, on
// rank 0, the server behind it. Every group of a job meets at the same
// MASTER_ADDR:MASTER_PORT, so a runtime's groups share one rendezvous (one
// server on rank 0, one connection per rank), each group under its own
// prefix in the store, as torch.distributed's new_group shares the default
// store.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "kiln/dist/process_group.hpp"

namespace kiln::dist {

struct Rendezvous {
  std::unique_ptr<TcpStoreServer> server;  // rank 0 only
  std::shared_ptr<TcpStore> store;
  ~Rendezvous() { store.reset(); }  // the client says goodbye before its server goes
};

// A runtime's rendezvous, by the address and rank they were made for;
// alive while a group holds them.
class RendezvousCache {
 public:
  // The live rendezvous for `o`'s address and rank, or a new one (rank 0
  // serves the store). A job of one rank always gets a new one, served on
  // a free port: it has nobody to meet.
  std::shared_ptr<Rendezvous> meet(const ProcessGroupOptions& o);

 private:
  std::mutex mutex_;
  std::map<std::string, std::weak_ptr<Rendezvous>> live_;
};

}  // namespace kiln::dist
