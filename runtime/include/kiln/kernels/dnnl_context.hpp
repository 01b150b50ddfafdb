// oneDNN state of one runtime: the CPU engine, a stream, primitives cached
// by a key that encodes the op, shapes and attributes, so a shape seen before
// costs a hash lookup instead of a JIT compile, and the runtime's thread
// count, which bounds oneDNN's OpenMP pool.
#pragma once

#include <dnnl.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace kiln {

class DnnlContext {
 public:
  explicit DnnlContext(int num_threads)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_), num_threads_(num_threads) {}

  const dnnl::engine& engine() const { return engine_; }
  dnnl::stream& stream() { return stream_; }

  // The cached object for `key`, created by `make` on first use. T is a
  // primitive or a primitive_desc bundle; keys of different T must differ.
  template <class T>
  std::shared_ptr<T> cached(const std::string& key, const std::function<T()>& make) {
    std::lock_guard lock(mutex_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return std::static_pointer_cast<T>(it->second);
    auto value = std::make_shared<T>(make());
    cache_.emplace(key, value);
    return value;
  }
  size_t cache_size() const {
    std::lock_guard lock(mutex_);
    return cache_.size();
  }

  // Kernels hold this while executing: oneDNN streams are not thread-safe.
  // It also bounds the OpenMP pool oneDNN runs on (one thread per core
  // otherwise, whatever the runtime's own count) for the calling thread.
  // `work` is about how many element operations the primitive does (an
  // element-wise op: its elements; a product: its multiply-adds over
  // kMultiplyAddsPerElement). Below kSerialWork it runs on the calling
  // thread alone: oneDNN splits any work over every thread, and waking the
  // pool for a few thousand elements costs more than the work (sigmoid of
  // an LSTM's gates, [32, 64] and [32, 256]: 16 us a call on one thread,
  // 1.5 ms on two while the other core was busy).
  std::unique_lock<std::mutex> lock_for_execution(int64_t work);

  // Runs `prim` on the stream under that lock (one primitive executes at a
  // time) and returns when it is done.
  void execute(const dnnl::primitive& prim, const std::unordered_map<int, dnnl::memory>& args, int64_t work);

  // kiln's own loops split work in chunks of this many elements (cpu::kElementGrain).
  static constexpr int64_t kSerialWork = int64_t(1) << 15;
  // A product's multiply-adds per element of element-wise work: a core's
  // vector units do about 32 (two 16-lane FMAs a cycle) in the time an
  // element-wise op moves one element through memory.
  static constexpr int64_t kMultiplyAddsPerElement = 32;

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  mutable std::mutex mutex_;
  std::mutex execute_mutex_;
  int num_threads_;
  std::unordered_map<std::string, std::shared_ptr<void>> cache_;
};

}  // namespace kiln
