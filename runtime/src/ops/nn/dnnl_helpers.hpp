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

// A oneDNN memory over a kiln buffer (no copy; the tensor must outlive it).
inline dnnl::memory wrap(DnnlContext& ctx, const dnnl::memory::desc& md, const void* data) {
  return dnnl::memory(md, ctx.engine(), const_cast<void*>(data));
}

// Runs `prim` on the runtime's stream; the stream is shared, so one primitive
// executes at a time and the call returns when it is done.
inline void execute(DnnlContext& ctx, const dnnl::primitive& prim, const std::unordered_map<int, dnnl::memory>& args) {
  std::lock_guard lock(ctx.execute_mutex());
  prim.execute(ctx.stream(), args);
  ctx.stream().wait();
}

}  // namespace kiln::nn
