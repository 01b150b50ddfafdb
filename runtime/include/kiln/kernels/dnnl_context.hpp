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
  std::unique_lock<std::mutex> lock_for_execution();

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  mutable std::mutex mutex_;
  std::mutex execute_mutex_;
  int num_threads_;
  std::unordered_map<std::string, std::shared_ptr<void>> cache_;
};

}  // namespace kiln
