// A kiln runtime owns everything: the op registry, an allocator per device,
// the CPU thread pool, the random stream and the oneDNN engine. Two runtimes
// in one process share nothing; destroying one joins its threads and frees
// its caches (memory still held by live tensors returns when they go).
//
//   kiln::Runtime rt;
//   const kiln::OpDef& add = rt.op("add");         // look up once
//   kiln::Tensor a = rt.full({2, 3}, 1.0), b = rt.full({2, 3}, 2.0);
//   kiln::Tensor c = rt.call1(add, {a, b});        // call by handle
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "kiln/device.hpp"
#include "kiln/memory/allocator.hpp"
#include "kiln/ops/registry.hpp"
#include "kiln/profiler/profiler.hpp"
#include "kiln/tensor.hpp"
#include "kiln/util/philox.hpp"
#include "kiln/util/thread_pool.hpp"

namespace kiln {

class DnnlContext;
class TransferQueue;
namespace dist {
class RendezvousCache;
}

struct RuntimeOptions {
  int num_threads = 0;  // CPU kernel threads; 0: one per hardware thread
  uint64_t seed = 0;    // initial seed of the random stream
  // f32 matrix products and convolutions on a GPU may round their inputs to
  // TF32 (10-bit mantissa) for speed; off, they keep full f32 precision.
  bool allow_tf32 = false;
  // CPU convolutions use oneDNN's direct kernels only; off, 3x3 and 5x5
  // stride-1 f32 convolutions may run by Winograd's algorithm: kiln's on
  // CPUs with AVX2 or AVX-512 (conv_winograd.hpp), else oneDNN's for 3x3
  // where it picks it on AVX-512 (conv_dnnl.cpp).
  bool direct_convolutions = false;
};

// What the runtime found at start: devices usable, and why a GPU is not.
struct DeviceInventory {
  int cuda_device_count = 0;
  std::string cuda_unavailable_reason;  // empty when a GPU is usable
};

class Runtime {
 public:
  explicit Runtime(const RuntimeOptions& options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  uint64_t id() const { return id_; }
  const RuntimeOptions& options() const { return options_; }

  // Ops.
  OpRegistry& registry() { return registry_; }
  const OpDef& op(std::string_view name) const { return registry_.get(name); }
  // Runs an op: checks inputs against the schema, casts floating inputs as
  // an open autocast scope says (kiln/ops/autocast.hpp), infers outputs,
  // picks the kernel for the inputs' device and dtype, and records the tape
  // when grad mode is on and an input requires grad.
  std::vector<Tensor> call(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs);
  Tensor call1(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs);
  Tensor call1(const OpDef& op, std::initializer_list<Tensor> inputs, const Attrs& attrs) {
    return call1(op, std::span<const Tensor>(inputs.begin(), inputs.size()), attrs);
  }
  Tensor call1(const OpDef& op, std::initializer_list<Tensor> inputs) { return call1(op, inputs, op.default_attrs()); }
  // By name with named attributes: convenient, slower (a lookup per call).
  std::vector<Tensor> call(std::string_view op, std::initializer_list<Tensor> inputs, NamedAttrs attrs = {});
  Tensor call1(std::string_view op, std::initializer_list<Tensor> inputs, NamedAttrs attrs = {});

  // Memory.
  const std::shared_ptr<Allocator>& allocator(Device device);
  // Host memory for data bound for a GPU (a loader's batches): page-locked
  // when a GPU is present, the CPU allocator otherwise.
  const std::shared_ptr<Allocator>& pinned_allocator();
  // The input copy stream of GPU `device` (kiln/memory/transfer_queue.hpp),
  // created on first use and destroyed with the runtime.
  const std::shared_ptr<TransferQueue>& transfer_queue(Device device);
  Tensor empty(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu());
  Tensor full(const Shape& shape, double value, DType dtype = DType::f32, Device device = Device::cpu());
  // A copy of `t` with contiguous layout (the same tensor when already contiguous).
  Tensor contiguous(const Tensor& t);
  const DeviceInventory& devices() const { return devices_; }
  void check_device(Device device) const;  // throws when this runtime cannot use it

  // Autograd: gradients of `root` (grad_output defaults to ones for a
  // one-element root) flow into the .grad of every leaf that requires grad.
  // The graph is freed afterwards unless retain_graph.
  void backward(const Tensor& root, const Tensor& grad_output = {}, bool retain_graph = false);
  // The same from several roots at once, `grad_outputs[i]` for `roots[i]`
  // (undefined: ones, for a one-element root): every node runs once, after
  // all the roots' gradients have reached it.
  void backward(std::span<const Tensor> roots, std::span<const Tensor> grad_outputs, bool retain_graph = false);

  // Random stream: seed it; each random op reserves `blocks` Philox counters.
  void manual_seed(uint64_t seed);
  GeneratorState generator_state() const;
  void set_generator_state(const GeneratorState& state);
  // Returns (seed, first counter) of a fresh range of `blocks` counters.
  GeneratorState reserve_random(uint64_t blocks);

  ThreadPool& thread_pool() { return pool_; }
  DnnlContext& dnnl() { return *dnnl_; }
  // Where this runtime's process groups meet their jobs (kiln/dist).
  dist::RendezvousCache& rendezvous() { return *rendezvous_; }

  // Autocast scopes of this runtime open on any thread (kept by
  // kiln/ops/autocast.hpp, per thread); while there are none, op calls skip
  // the per-thread lookup.
  bool any_autocast_scope() const { return autocast_scopes_.load(std::memory_order_relaxed) != 0; }
  void count_autocast_scope(int delta) { autocast_scopes_.fetch_add(delta, std::memory_order_relaxed); }

  // The per-op profiler (kiln/profiler/profiler.hpp): op calls and backward
  // functions record events while it is on.
  Profiler& profiler() { return profiler_; }

 private:
  uint64_t id_;
  RuntimeOptions options_;
  OpRegistry registry_;
  DeviceInventory devices_;
  std::shared_ptr<Allocator> cpu_allocator_;
  std::vector<std::shared_ptr<Allocator>> cuda_allocators_;  // one per GPU, created on first use
  std::shared_ptr<Allocator> pinned_allocator_;               // created on first use
  std::vector<std::shared_ptr<TransferQueue>> transfer_queues_;  // one per GPU, created on first use
  std::mutex allocator_mutex_;
  ThreadPool pool_;
  mutable std::mutex rng_mutex_;
  GeneratorState rng_;
  std::unique_ptr<DnnlContext> dnnl_;
  std::unique_ptr<dist::RendezvousCache> rendezvous_;
  std::atomic<int> autocast_scopes_{0};
  Profiler profiler_;
};

}  // namespace kiln
