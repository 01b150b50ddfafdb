#include "dnnl_eltwise.hpp"

#include <bit>

#include "kiln/kernels/dnnl_context.hpp"
#include "kiln/util/str_cat.hpp"

namespace kiln::elementwise {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dnnl::memory::desc flat_desc(int64_t n) { return dnnl::memory::desc({n}, dt::f32, tag::a); }

// Parameters enter the key as bit patterns: printed reals could round two
// different slopes to one key.
std::string cache_key(const char* kind, const EltwiseParams& p, int64_t n) {
  return str_cat(kind, '/', int(p.algorithm), '/', std::bit_cast<uint32_t>(float(p.alpha)), '/',
                 std::bit_cast<uint32_t>(float(p.beta)), '/', n);
}

dnnl::eltwise_forward::primitive_desc forward_pd(const dnnl::engine& engine, const EltwiseParams& p, int64_t n) {
  const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_training, p.algorithm, flat_desc(n), float(p.alpha),
                                         float(p.beta));
  return {desc, engine};
}

void execute(Runtime& rt, const dnnl::primitive& prim, const std::unordered_map<int, dnnl::memory>& args) {
  DnnlContext& ctx = rt.dnnl();
  const auto lock = ctx.lock_for_execution();
  prim.execute(ctx.stream(), args);
  ctx.stream().wait();
}

// oneDNN takes mutable handles; inputs are only read.
dnnl::memory wrap(const dnnl::engine& engine, int64_t n, const float* data) {
  return dnnl::memory(flat_desc(n), engine, const_cast<float*>(data));
}

}  // namespace

void dnnl_eltwise_forward(Runtime& rt, const EltwiseParams& p, const float* src, float* dst, int64_t n) {
  if (n == 0) return;
  const dnnl::engine& engine = rt.dnnl().engine();
  auto prim = rt.dnnl().cached<dnnl::eltwise_forward>(cache_key("eltwise_fwd", p, n), [&] {
    return dnnl::eltwise_forward(forward_pd(engine, p, n));
  });
  execute(rt, *prim, {{DNNL_ARG_SRC, wrap(engine, n, src)}, {DNNL_ARG_DST, wrap(engine, n, dst)}});
}

void dnnl_eltwise_backward(Runtime& rt, const EltwiseParams& p, const float* src, const float* diff_dst,
                           float* diff_src, int64_t n) {
  if (n == 0) return;
  const dnnl::engine& engine = rt.dnnl().engine();
  auto prim = rt.dnnl().cached<dnnl::eltwise_backward>(cache_key("eltwise_bwd", p, n), [&] {
    const dnnl::eltwise_backward::desc desc(p.algorithm, flat_desc(n), flat_desc(n), float(p.alpha), float(p.beta));
    return dnnl::eltwise_backward(dnnl::eltwise_backward::primitive_desc(desc, engine, forward_pd(engine, p, n)));
  });
  execute(rt, *prim,
          {{DNNL_ARG_SRC, wrap(engine, n, src)},
           {DNNL_ARG_DIFF_DST, wrap(engine, n, diff_dst)},
           {DNNL_ARG_DIFF_SRC, wrap(engine, n, diff_src)}});
}

}  // namespace kiln::elementwise
