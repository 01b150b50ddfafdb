// oneDNN state of one runtime: the CPU engine, a stream, and primitives cached
// by a key that encodes the op, shapes and attributes, so a shape seen before
// costs a hash lookup instead of a JIT compile.
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
  DnnlContext() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

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

  // oneDNN streams are not thread-safe; kernels hold this while executing.
  std::mutex& execute_mutex() { return execute_mutex_; }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  mutable std::mutex mutex_;
  std::mutex execute_mutex_;
  std::unordered_map<std::string, std::shared_ptr<void>> cache_;
};

}  // namespace kiln
