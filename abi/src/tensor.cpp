// Tensor handles: creation (fresh, filled, copied from the host, wrapping
// host memory), reference counting and queries.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "convert.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "kiln/error.hpp"

using kiln::abi::guarded;
using kiln::abi::new_handle;

namespace {

// The context of a wrapped buffer's deleter. The host's callback runs only
// once the tensor exists: if creating it fails, the memory stays the host's.
struct WrappedMemory {
  kiln_release_fn release;
  void* user_data;
  bool armed = false;
};

void release_wrapped(void* ctx, void* data) {
  auto* w = static_cast<WrappedMemory*>(ctx);
  if (w->armed && w->release) w->release(w->user_data, data);
  delete w;
}

size_t bytes_of(const kiln::Shape& shape, kiln::DType dtype) { return size_t(shape.numel()) * kiln::dtype_size(dtype); }

}  // namespace

extern "C" {

kiln_status kiln_tensor_empty(kiln_runtime* rt, const int64_t* shape, int rank, kiln_dtype dtype,
                              kiln_device_type device, int device_index, kiln_tensor** out) {
  KILN_REQUIRE(rt, out);
  return guarded(__func__, [&] {
    kiln::Tensor t = rt->runtime.empty(kiln::abi::to_shape(shape, rank, "shape"), kiln::abi::to_dtype(dtype),
                                       kiln::abi::to_device(device, device_index));
    *out = new_handle(rt, std::move(t));
  });
}

kiln_status kiln_tensor_full(kiln_runtime* rt, const int64_t* shape, int rank, double value, kiln_dtype dtype,
                             kiln_device_type device, int device_index, kiln_tensor** out) {
  KILN_REQUIRE(rt, out);
  return guarded(__func__, [&] {
    kiln::Tensor t = rt->runtime.full(kiln::abi::to_shape(shape, rank, "shape"), value, kiln::abi::to_dtype(dtype),
                                      kiln::abi::to_device(device, device_index));
    *out = new_handle(rt, std::move(t));
  });
}

kiln_status kiln_tensor_zeros(kiln_runtime* rt, const int64_t* shape, int rank, kiln_dtype dtype,
                              kiln_device_type device, int device_index, kiln_tensor** out) {
  return kiln_tensor_full(rt, shape, rank, 0.0, dtype, device, device_index, out);
}

kiln_status kiln_tensor_from_data(kiln_runtime* rt, const void* data, size_t nbytes, const int64_t* shape, int rank,
                                  kiln_dtype dtype, kiln_tensor** out) {
  KILN_REQUIRE(rt, data, out);
  return guarded(__func__, [&] {
    const kiln::Shape s = kiln::abi::to_shape(shape, rank, "shape");
    const kiln::DType t = kiln::abi::to_dtype(dtype);
    KILN_CHECK(nbytes == bytes_of(s, t), kiln::Status::invalid_argument, "a ", kiln::dtype_name(t), to_string(s),
               " tensor has ", bytes_of(s, t), " bytes, the buffer ", nbytes);
    kiln::Tensor tensor = rt->runtime.empty(s, t);
    std::memcpy(tensor.raw_data(), data, nbytes);
    *out = new_handle(rt, std::move(tensor));
  });
}

kiln_status kiln_tensor_wrap(kiln_runtime* rt, void* data, size_t nbytes, const int64_t* shape, int rank,
                             kiln_dtype dtype, kiln_release_fn release, void* user_data, kiln_tensor** out) {
  KILN_REQUIRE(rt, data, out);
  return guarded(__func__, [&] {
    const kiln::Shape s = kiln::abi::to_shape(shape, rank, "shape");
    const kiln::DType t = kiln::abi::to_dtype(dtype);
    KILN_CHECK(nbytes >= bytes_of(s, t), kiln::Status::invalid_argument, "a ", kiln::dtype_name(t), to_string(s),
               " tensor needs ", bytes_of(s, t), " bytes, the buffer has ", nbytes);
    KILN_CHECK(reinterpret_cast<uintptr_t>(data) % kiln::dtype_size(t) == 0, kiln::Status::invalid_argument,
               "the buffer is not aligned for ", kiln::dtype_name(t), " elements");
    auto* ctx = new WrappedMemory{release, user_data};
    auto storage = std::make_shared<kiln::Storage>(kiln::DataPtr(data, ctx, release_wrapped), nbytes,
                                                   kiln::Device::cpu(), nullptr);
    *out = new_handle(rt, kiln::Tensor::from_storage(std::move(storage), s, t));
    ctx->armed = true;
  });
}

void kiln_tensor_retain(kiln_tensor* t) {
  if (t) t->refs.fetch_add(1, std::memory_order_relaxed);
}

void kiln_tensor_release(kiln_tensor* t) {
  if (t && t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete t;
}

kiln_status kiln_tensor_rank(const kiln_tensor* t, int* out) {
  KILN_REQUIRE(t, out);
  *out = t->tensor.rank();
  return KILN_OK;
}

kiln_status kiln_tensor_shape(const kiln_tensor* t, int64_t* dims, int max_dims) {
  KILN_REQUIRE(t, dims);
  return guarded(__func__, [&] {
    const kiln::Shape& s = t->tensor.shape();
    KILN_CHECK(max_dims >= s.rank(), kiln::Status::invalid_argument, "'dims' holds ", max_dims,
               " dimensions, the tensor has ", s.rank());
    std::copy(s.begin(), s.end(), dims);
  });
}

kiln_status kiln_tensor_numel(const kiln_tensor* t, int64_t* out) {
  KILN_REQUIRE(t, out);
  *out = t->tensor.numel();
  return KILN_OK;
}

kiln_status kiln_tensor_dtype(const kiln_tensor* t, kiln_dtype* out) {
  KILN_REQUIRE(t, out);
  *out = kiln::abi::from_dtype(t->tensor.dtype());
  return KILN_OK;
}

kiln_status kiln_tensor_device(const kiln_tensor* t, kiln_device_type* type, int* index) {
  KILN_REQUIRE(t, type, index);
  const kiln::Device d = t->tensor.device();
  *type = kiln_device_type(d.type);
  *index = d.index;
  return KILN_OK;
}

}  // extern "C"
