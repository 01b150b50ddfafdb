// kiln::Tensor: a reference on a kiln_tensor (copies share the tensor), its
// creation from shapes, values and host memory, queries, reads, and the
// autograd state a tensor carries.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "error.hpp"
#include "handle.hpp"
#include "kiln/kiln.h"
#include "runtime.hpp"

namespace kiln {

using Shape = std::vector<int64_t>;

// The element type of a C++ type: dtype_of<float>() is KILN_F32.
template <class T>
struct DtypeOf;
template <>
struct DtypeOf<float> {
  static constexpr kiln_dtype value = KILN_F32;
};
template <>
struct DtypeOf<double> {
  static constexpr kiln_dtype value = KILN_F64;
};
template <>
struct DtypeOf<int32_t> {
  static constexpr kiln_dtype value = KILN_I32;
};
template <>
struct DtypeOf<int64_t> {
  static constexpr kiln_dtype value = KILN_I64;
};
template <>
struct DtypeOf<uint8_t> {
  static constexpr kiln_dtype value = KILN_U8;
};
template <class T>
constexpr kiln_dtype dtype_of() {
  return DtypeOf<T>::value;
}

// "f32", "i64", ...: the names kiln's messages use.
inline const char* dtype_name(kiln_dtype dtype) {
  static const char* const names[] = {"f32", "f64", "f16", "bf16", "i32", "i64", "u8", "bool"};
  return dtype >= KILN_F32 && dtype <= KILN_BOOL ? names[dtype] : "an unknown dtype";
}

class Tensor : public detail::SharedHandle<kiln_tensor, kiln_tensor_retain, kiln_tensor_release> {
 public:
  explicit Tensor(std::nullptr_t) noexcept {}
  // Takes over the caller's reference on `t`; retain() adds one.
  static Tensor adopt(kiln_tensor* t) noexcept { return Tensor(t); }
  static Tensor retain(kiln_tensor* t) noexcept {
    kiln_tensor_retain(t);
    return Tensor(t);
  }

  static Tensor empty(const Runtime& rt, const Shape& shape, kiln_dtype dtype = KILN_F32, Device device = {}) {
    kiln_tensor* t = nullptr;
    check(kiln_tensor_empty(rt.get(), shape.data(), rank_of(shape), dtype, device.type, device.index, &t));
    return adopt(t);
  }
  static Tensor zeros(const Runtime& rt, const Shape& shape, kiln_dtype dtype = KILN_F32, Device device = {}) {
    kiln_tensor* t = nullptr;
    check(kiln_tensor_zeros(rt.get(), shape.data(), rank_of(shape), dtype, device.type, device.index, &t));
    return adopt(t);
  }
  static Tensor full(const Runtime& rt, const Shape& shape, double value, kiln_dtype dtype = KILN_F32,
                     Device device = {}) {
    kiln_tensor* t = nullptr;
    check(kiln_tensor_full(rt.get(), shape.data(), rank_of(shape), value, dtype, device.type, device.index, &t));
    return adopt(t);
  }

  // A CPU tensor holding a copy of `nbytes` bytes at `data`, row-major.
  static Tensor from_data(const Runtime& rt, const void* data, size_t nbytes, const Shape& shape, kiln_dtype dtype) {
    kiln_tensor* t = nullptr;
    check(kiln_tensor_from_data(rt.get(), data, nbytes, shape.data(), rank_of(shape), dtype, &t));
    return adopt(t);
  }
  // A CPU tensor of `shape` holding a copy of `values`, whose type gives the dtype.
  template <class T>
  static Tensor from_data(const Runtime& rt, const std::vector<T>& values, const Shape& shape) {
    return from_data(rt, values.data(), values.size() * sizeof(T), shape, dtype_of<T>());
  }

  // A CPU tensor over the caller's memory, without a copy (see
  // kiln_tensor_wrap). `on_release` runs once, when the last tensor viewing
  // the memory is gone: inside kiln, possibly on another thread, so it must
  // not throw (an exception from it is dropped: there is no caller to take
  // it). On failure it does not run and the memory stays the caller's.
  static Tensor wrap(const Runtime& rt, void* data, size_t nbytes, const Shape& shape, kiln_dtype dtype,
                     std::function<void()> on_release = {}) {
    auto callback = std::make_unique<std::function<void()>>(std::move(on_release));
    kiln_tensor* t = nullptr;
    check(kiln_tensor_wrap(rt.get(), data, nbytes, shape.data(), rank_of(shape), dtype, released, callback.get(), &t));
    callback.release();  // now the library's: `released` deletes it
    return adopt(t);
  }

  int rank() const {
    int rank = 0;
    check(kiln_tensor_rank(get(), &rank));
    return rank;
  }
  Shape shape() const {
    int64_t dims[KILN_MAX_DIMS];
    check(kiln_tensor_shape(get(), dims, KILN_MAX_DIMS));
    return Shape(dims, dims + rank());
  }
  int64_t numel() const {
    int64_t n = 0;
    check(kiln_tensor_numel(get(), &n));
    return n;
  }
  kiln_dtype dtype() const {
    kiln_dtype dtype{};
    check(kiln_tensor_dtype(get(), &dtype));
    return dtype;
  }
  Device device() const {
    Device device;
    check(kiln_tensor_device(get(), &device.type, &device.index));
    return device;
  }

  // Copies the elements, row-major, into `dst` (at least the tensor's bytes).
  void read(void* dst, size_t dst_bytes) const { check(kiln_tensor_read(get(), dst, dst_bytes)); }
  // The elements as a vector; T must be the tensor's element type.
  template <class T>
  std::vector<T> to_vector() const {
    expect_dtype(dtype_of<T>(), "to_vector");
    std::vector<T> values(static_cast<size_t>(numel()));
    read(values.data(), values.size() * sizeof(T));
    return values;
  }
  // The value of a one-element tensor.
  template <class T>
  T item() const {
    const int64_t n = numel();
    if (n != 1)
      detail::fail(KILN_ERR_SHAPE_MISMATCH, "item() needs a tensor of one element; this one has " + std::to_string(n));
    return to_vector<T>()[0];
  }
  // The memory of a contiguous CPU tensor, valid while the tensor lives.
  template <class T>
  T* data() const {
    expect_dtype(dtype_of<T>(), "data");
    void* p = nullptr;
    check(kiln_tensor_data(get(), &p));
    return static_cast<T*>(p);
  }
  Tensor contiguous() const {
    kiln_tensor* t = nullptr;
    check(kiln_tensor_contiguous(get(), &t));
    return adopt(t);
  }
  // Copies the elements of `src` (same shape; converted) into this tensor.
  void assign(const Tensor& src) { check(kiln_tensor_assign(get(), src.get())); }

  void set_requires_grad(bool requires_grad = true) { check(kiln_tensor_set_requires_grad(get(), requires_grad)); }
  bool requires_grad() const {
    int out = 0;
    check(kiln_tensor_requires_grad(get(), &out));
    return out != 0;
  }
  // The accumulated gradient; tests false when there is none yet.
  Tensor grad() const {
    kiln_tensor* g = nullptr;
    check(kiln_tensor_grad(get(), &g));
    return adopt(g);
  }
  void zero_grad() { check(kiln_tensor_zero_grad(get())); }
  Tensor detach() const {
    kiln_tensor* t = nullptr;
    check(kiln_tensor_detach(get(), &t));
    return adopt(t);
  }
  Tensor to(Device device) const {
    kiln_tensor* t = nullptr;
    check(kiln_tensor_to(get(), device.type, device.index, &t));
    return adopt(t);
  }

 private:
  explicit Tensor(kiln_tensor* t) noexcept : SharedHandle(t) {}

  static int rank_of(const Shape& shape) { return static_cast<int>(shape.size()); }

  void expect_dtype(kiln_dtype wanted, const char* reader) const {
    const kiln_dtype held = dtype();
    if (held != wanted)
      detail::fail(KILN_ERR_DTYPE_MISMATCH, std::string(reader) + "<" + dtype_name(wanted) + "> on a tensor of " +
                                                dtype_name(held) + "; read it with the type of its elements");
  }

  static void released(void* user_data, void*) {
    std::unique_ptr<std::function<void()>> callback(static_cast<std::function<void()>*>(user_data));
    try {
      if (*callback) (*callback)();
    } catch (...) {  // see wrap(): nobody above this frame could take it
    }
  }
};

// A tensor with its name: a parameter ("0.weight"), a field of an example.
struct NamedTensor {
  std::string name;
  Tensor tensor;
};

namespace detail {
// Tensors as the C API takes them: handles that stay the wrappers'.
inline std::vector<kiln_tensor*> handles_of(const std::vector<Tensor>& tensors) {
  std::vector<kiln_tensor*> handles;
  handles.reserve(tensors.size());
  for (const Tensor& t : tensors) handles.push_back(t.get());
  return handles;
}
// Tensors the C API gave out: `n` references taken over (and dropped
// when there is no memory to hold them).
inline std::vector<Tensor> adopt_all(kiln_tensor* const* handles, size_t n) {
  std::vector<Tensor> tensors;
  try {
    tensors.reserve(n);
  } catch (...) {
    for (size_t i = 0; i < n; ++i) kiln_tensor_release(handles[i]);
    throw;
  }
  for (size_t i = 0; i < n; ++i) tensors.push_back(Tensor::adopt(handles[i]));
  return tensors;
}
// The named tensors of a handle that lists them as the C API does: a count,
// then (name, new reference) by index.
template <class Handle, class CountFn, class GetFn>
std::vector<NamedTensor> named_tensors(Handle* handle, CountFn count_fn, GetFn get_fn) {
  size_t count = 0;
  check(count_fn(handle, &count));
  std::vector<NamedTensor> tensors;
  for (size_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    kiln_tensor* t = nullptr;
    check(get_fn(handle, i, &name, &t));
    Tensor owned = Tensor::adopt(t);
    tensors.push_back({name, std::move(owned)});
  }
  return tensors;
}
}  // namespace detail

}  // namespace kiln
