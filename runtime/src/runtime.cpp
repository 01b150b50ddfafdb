#include "kiln/runtime.hpp"

#include <atomic>
#include <cstdlib>
#include <thread>

#include "dist/rendezvous.hpp"
#include "kiln/error.hpp"
#include "kiln/kernels/builtin_ops.hpp"
#include "kiln/kernels/dnnl_context.hpp"
#include "kiln/memory/cpu_allocator.hpp"
#include "kiln/memory/cuda.hpp"

namespace kiln {
namespace {

// Runtime ids key the per-thread grad-mode table; an id is never reused, so
// a stale entry can never apply to a later runtime. This counter is the only
// state shared between runtimes and holds no resource.
std::atomic<uint64_t> next_runtime_id{1};

// Asked for, or KILN_NUM_THREADS (kiln launch gives each rank its share of
// the cores there), or one per hardware thread.
int default_threads(int requested) {
  if (requested > 0) return requested;
  if (const char* env = std::getenv("KILN_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 1 ? int(hw) : 1;
}

}  // namespace

Runtime::Runtime(const RuntimeOptions& options)
    : id_(next_runtime_id.fetch_add(1)),
      options_(options),
      devices_(cuda_inventory()),
      cpu_allocator_(std::make_shared<CpuAllocator>()),
      pool_(default_threads(options.num_threads) - 1),  // the calling thread is a worker too
      dnnl_(std::make_unique<DnnlContext>(pool_.num_workers())),
      rendezvous_(std::make_unique<dist::RendezvousCache>()) {
  rng_.seed = options.seed;
  cuda_allocators_.resize(size_t(devices_.cuda_device_count));
  transfer_queues_.resize(size_t(devices_.cuda_device_count));
  register_builtin_ops(registry_);
}

Runtime::~Runtime() = default;

void Runtime::check_device(Device device) const {
  if (device.is_cpu()) return;
  KILN_CHECK(devices_.cuda_device_count > 0, Status::device_mismatch, "device ", to_string(device),
             " is not available: ", devices_.cuda_unavailable_reason);
  KILN_CHECK(device.index >= 0 && device.index < devices_.cuda_device_count, Status::device_mismatch, "device ",
             to_string(device), " does not exist (", devices_.cuda_device_count, " GPU(s) found)");
}

const std::shared_ptr<Allocator>& Runtime::allocator(Device device) {
  if (device.is_cpu()) return cpu_allocator_;
  check_device(device);
  std::lock_guard lock(allocator_mutex_);
  std::shared_ptr<Allocator>& slot = cuda_allocators_[size_t(device.index)];
  if (!slot) slot = make_cuda_allocator(device.index);
  return slot;
}

const std::shared_ptr<TransferQueue>& Runtime::transfer_queue(Device device) {
  KILN_CHECK(device.is_cuda(), Status::invalid_argument, "input copies go to a GPU, not to ", to_string(device));
  check_device(device);
  std::lock_guard lock(allocator_mutex_);
  std::shared_ptr<TransferQueue>& slot = transfer_queues_[size_t(device.index)];
  if (!slot) slot = make_cuda_transfer_queue(device.index);
  return slot;
}

const std::shared_ptr<Allocator>& Runtime::pinned_allocator() {
  std::lock_guard lock(allocator_mutex_);
  if (!pinned_allocator_)
    pinned_allocator_ = devices_.cuda_device_count > 0 ? make_pinned_host_allocator() : cpu_allocator_;
  return pinned_allocator_;
}

Tensor Runtime::empty(const Shape& shape, DType dtype, Device device) {
  return Tensor::empty(shape, dtype, allocator(device));
}

Tensor Runtime::full(const Shape& shape, double value, DType dtype, Device device) {
  const OpDef& def = op("full");
  return call1(def, {}, def.make_attrs({{"shape", std::vector<int64_t>(shape.begin(), shape.end())},
                                        {"value", value},
                                        {"dtype", dtype},
                                        {"device", to_string(device)}}));
}

Tensor Runtime::contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  return call1("copy", {t});
}

void Runtime::manual_seed(uint64_t seed) {
  std::lock_guard lock(rng_mutex_);
  rng_ = {seed, 0};
}

GeneratorState Runtime::generator_state() const {
  std::lock_guard lock(rng_mutex_);
  return rng_;
}

void Runtime::set_generator_state(const GeneratorState& state) {
  std::lock_guard lock(rng_mutex_);
  rng_ = state;
}

GeneratorState Runtime::reserve_random(uint64_t blocks) {
  std::lock_guard lock(rng_mutex_);
  GeneratorState range = rng_;
  rng_.offset += blocks;
  return range;
}

}  // namespace kiln
