// What a process group asks of its transport (Gloo, NCCL). The group checks
// arguments, orders the collectives on its own thread and names the rank at
// fault when one fails; a backend only moves and reduces the bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "kiln/dist/process_group.hpp"

namespace kiln::dist {

class Backend {
 public:
  virtual ~Backend() = default;

  // The devices whose tensors it moves ("cpu" for Gloo).
  virtual bool takes(const Tensor& t) const = 0;
  virtual const char* name() const = 0;

  // Collectives run one at a time on the group's thread, in the same order
  // on every rank; `seq` numbers them (0, 1, ...) and tells them apart on
  // the wire. They throw on failure.
  virtual void all_reduce(const Tensor& t, ReduceOp op, uint32_t seq) = 0;
  virtual void broadcast(const Tensor& t, int root, uint32_t seq) = 0;
  virtual void all_gather(const Tensor& input, const Tensor& output, uint32_t seq) = 0;
  virtual void reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op, uint32_t seq) = 0;
  virtual void barrier(uint32_t seq) = 0;

  // Point to point, on the caller's thread: start the transfer and return a
  // function that blocks until it is complete (throwing on failure).
  virtual std::function<void()> start_send(const Tensor& t, int dst, int tag) = 0;
  virtual std::function<void()> start_recv(const Tensor& t, int src, int tag) = 0;
};

// Connects the ranks over TCP through the store under `prefix`.
std::unique_ptr<Backend> make_gloo_backend(const ProcessGroupOptions& options, Store& store,
                                           const std::string& prefix);
// NCCL, where kiln was built with it; throws Status::unsupported otherwise.
std::unique_ptr<Backend> make_nccl_backend(const ProcessGroupOptions& options, Store& store,
                                           const std::string& prefix);

}  // namespace kiln::dist
