// Owned references on C handles (runtimes, tensors, modules): retained when copied,
// released when dropped, so values and children can be held by containers
// without counting references by hand.
#pragma once

#include <utility>

#include "kiln/kiln.h"

namespace kiln::abi {

template <class T, void (*Retain)(T*), void (*Release)(T*)>
class HandleRef {
 public:
  HandleRef() = default;
  // Takes over one reference the caller holds.
  static HandleRef adopt(T* handle) { return HandleRef(handle); }
  // Adds a reference of its own.
  static HandleRef retain(T* handle) {
    Retain(handle);
    return HandleRef(handle);
  }

  HandleRef(const HandleRef& other) : handle_(other.handle_) { Retain(handle_); }
  HandleRef(HandleRef&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  HandleRef& operator=(HandleRef other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  ~HandleRef() { Release(handle_); }

  T* get() const { return handle_; }
  T* operator->() const { return handle_; }
  // Gives the reference to the caller.
  T* release() { return std::exchange(handle_, nullptr); }

 private:
  explicit HandleRef(T* handle) : handle_(handle) {}
  T* handle_ = nullptr;
};

using RuntimeRef = HandleRef<kiln_runtime, kiln_runtime_retain, kiln_runtime_release>;
using TensorRef = HandleRef<kiln_tensor, kiln_tensor_retain, kiln_tensor_release>;
using ModuleRef = HandleRef<kiln_module, kiln_module_retain, kiln_module_release>;

}  // namespace kiln::abi
