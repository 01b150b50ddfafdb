// Tensor handles held by the optimizer code: one reference on each, dropped
// when the list goes. The handles sit in one array so that a plugin callback
// can receive them as `kiln_tensor* const*` without copying.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::abi {

class OwnedTensors {
 public:
  OwnedTensors() = default;
  OwnedTensors(const OwnedTensors&) = delete;
  OwnedTensors& operator=(const OwnedTensors&) = delete;
  OwnedTensors(OwnedTensors&& other) noexcept : handles_(std::exchange(other.handles_, {})) {}
  OwnedTensors& operator=(OwnedTensors&& other) noexcept {
    std::swap(handles_, other.handles_);
    return *this;
  }
  ~OwnedTensors() { clear(); }

  // Takes over the caller's reference on `t`; `t` is released if it cannot be kept.
  void adopt(kiln_tensor* t) {
    try {
      handles_.push_back(t);
    } catch (...) {
      kiln_tensor_release(t);
      throw;
    }
  }
  // Adds a reference of its own on `t`.
  void retain(kiln_tensor* t) {
    kiln_tensor_retain(t);
    adopt(t);
  }
  void clear() {
    for (kiln_tensor* t : handles_) kiln_tensor_release(t);
    handles_.clear();
  }

  kiln_tensor* const* data() const { return handles_.data(); }
  size_t size() const { return handles_.size(); }
  bool empty() const { return handles_.empty(); }
  kiln_tensor* operator[](size_t i) const { return handles_[i]; }

 private:
  std::vector<kiln_tensor*> handles_;
};

}  // namespace kiln::abi
