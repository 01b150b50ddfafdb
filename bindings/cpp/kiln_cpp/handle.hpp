// The ownership of C handles: one reference each, dropped by the
// destructor. Handles the C API can retain are copyable (a copy is one more
// reference on the same object); the others are move-only. A moved-from
// wrapper, or one made from nullptr, holds no handle and tests false.
#pragma once

#include <cstddef>
#include <utility>

namespace kiln::detail {

template <class Handle, void (*Release)(Handle*)>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  // Takes over one reference the caller holds.
  explicit UniqueHandle(Handle* handle) noexcept : handle_(handle) {}
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      Release(handle_);
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { Release(handle_); }  // releasing NULL does nothing

  // The C handle, for calls of kiln.h; it stays this wrapper's.
  Handle* get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  Handle* handle_ = nullptr;
};

template <class Handle, void (*Retain)(Handle*), void (*Release)(Handle*)>
class SharedHandle : public UniqueHandle<Handle, Release> {
  using Base = UniqueHandle<Handle, Release>;

 public:
  SharedHandle(SharedHandle&&) noexcept = default;
  SharedHandle(const SharedHandle& other) noexcept : Base(other.get()) { Retain(other.get()); }
  SharedHandle& operator=(SharedHandle other) noexcept {
    Base::operator=(std::move(other));
    return *this;
  }
  ~SharedHandle() = default;

 protected:
  SharedHandle() = default;
  explicit SharedHandle(Handle* handle) noexcept : Base(handle) {}
};

}  // namespace kiln::detail
