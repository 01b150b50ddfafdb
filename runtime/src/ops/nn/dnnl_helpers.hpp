// Small pieces shared by the ops that run on oneDNN: memory descriptors from
// kiln tensors, wrapping kiln buffers, and executing a primitive on the runtime's stream.
#pragma once

#include <dnnl.hpp>
#include <unordered_map>

#include "kiln/kernels/dnnl_context.hpp"
#include "kiln/runtime.hpp"

namespace kiln::nn {

inline dnnl::memory::dims to_dims(const Shape& s) { return dnnl::memory::dims(s.begin(), s.end()); }

// An f32 descriptor with explicit strides (in elements), so views such as a
// transpose reach oneDNN without a copy.
inline dnnl::memory::desc f32_desc(const Shape& dims, const Shape& strides) {
  return dnnl::memory::desc(to_dims(dims), dnnl::memory::data_type::f32, to_dims(strides));
}
inline dnnl::memory::desc f32_desc(const Shape& dims) { return f32_desc(dims, contiguous_strides(dims)); }

// oneDNN's data type for the dtypes its CPU primitives compute in: f32, bf16
// and f16 (f64 has none; kiln runs it as plain loops).
inline dnnl::memory::data_type dnnl_data_type(DType t) {
  switch (t) {
    case DType::bf16: return dnnl::memory::data_type::bf16;
    case DType::f16: return dnnl::memory::data_type::f16;
    default: return dnnl::memory::data_type::f32;
  }
}
// The same descriptors for any of those dtypes.
inline dnnl::memory::desc typed_desc(const Shape& dims, const Shape& strides, DType t) {
  return dnnl::memory::desc(to_dims(dims), dnnl_data_type(t), to_dims(strides));
}
inline dnnl::memory::desc typed_desc(const Shape& dims, DType t) { return typed_desc(dims, contiguous_strides(dims), t); }

// A oneDNN memory over a kiln buffer (no copy; the tensor must outlive it).
inline dnnl::memory wrap(DnnlContext& ctx, const dnnl::memory::desc& md, const void* data) {
  return dnnl::memory(md, ctx.engine(), const_cast<void*>(data));
}

}  // namespace kiln::nn
