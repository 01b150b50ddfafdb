#include <string>
#include <type_traits>

#include "kiln/kernels/dnnl_context.hpp"
#include "kiln/runtime.hpp"
#include "kiln/util/str_cat.hpp"
#include "softmax.hpp"

namespace kiln::reduction {
namespace {

template <bool Log>
using ForwardPrimitive = std::conditional_t<Log, dnnl::logsoftmax_forward, dnnl::softmax_forward>;
template <bool Log>
using BackwardPrimitive = std::conditional_t<Log, dnnl::logsoftmax_backward, dnnl::softmax_backward>;

// The rows as a dense 3-d f32 tensor, reduced along axis 1.
dnnl::memory::desc rows_desc(const SoftmaxRows& r) {
  return dnnl::memory::desc({r.outer, r.n, r.inner}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::abc);
}

std::string rows_key(const char* what, const SoftmaxRows& r) {
  return str_cat("reduction/", what, ":", r.outer, "x", r.n, "x", r.inner);
}

template <bool Log>
struct ForwardBundle {
  typename ForwardPrimitive<Log>::primitive_desc pd;
  ForwardPrimitive<Log> primitive;
};

template <bool Log>
std::shared_ptr<ForwardBundle<Log>> forward_bundle(DnnlContext& ctx, const SoftmaxRows& r) {
  return ctx.cached<ForwardBundle<Log>>(rows_key(Log ? "log_softmax_fwd" : "softmax_fwd", r), [&] {
    const dnnl::memory::desc md = rows_desc(r);
    typename ForwardPrimitive<Log>::desc d(dnnl::prop_kind::forward_training, md, 1);
    typename ForwardPrimitive<Log>::primitive_desc pd(d, ctx.engine());
    return ForwardBundle<Log>{pd, ForwardPrimitive<Log>(pd)};
  });
}

}  // namespace

template <bool Log>
void dnnl_softmax_rows(Runtime& rt, const SoftmaxRows& r, const float* x, float* y) {
  if (r.outer * r.n * r.inner == 0) return;
  DnnlContext& ctx = rt.dnnl();
  const auto bundle = forward_bundle<Log>(ctx, r);
  const dnnl::memory::desc md = rows_desc(r);
  dnnl::memory src(md, ctx.engine(), const_cast<float*>(x));  // only read
  dnnl::memory dst(md, ctx.engine(), y);
  ctx.execute(bundle->primitive, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, r.outer * r.n * r.inner);
}

template <bool Log>
void softmax_dnnl_kernel(const KernelCall& c) {
  const SoftmaxRows r = softmax_rows(c.op, c.inputs[0].shape(), c.attrs);
  dnnl_softmax_rows<Log>(c.runtime, r, c.inputs[0].data<float>(), c.outputs[0].data<float>());
}

template <bool Log>
void softmax_backward_dnnl_kernel(const KernelCall& c) {
  const SoftmaxRows r = softmax_rows(c.op, c.inputs[0].shape(), c.attrs);
  if (c.inputs[0].numel() == 0) return;
  DnnlContext& ctx = c.runtime.dnnl();
  const auto forward = forward_bundle<Log>(ctx, r);
  const auto backward =
      ctx.cached<BackwardPrimitive<Log>>(rows_key(Log ? "log_softmax_bwd" : "softmax_bwd", r), [&] {
        const dnnl::memory::desc md = rows_desc(r);
        typename BackwardPrimitive<Log>::desc d(md, md, 1);
        return BackwardPrimitive<Log>(typename BackwardPrimitive<Log>::primitive_desc(d, ctx.engine(), forward->pd));
      });
  const dnnl::memory::desc md = rows_desc(r);
  dnnl::memory diff_dst(md, ctx.engine(), c.inputs[0].raw_data());
  dnnl::memory dst(md, ctx.engine(), c.inputs[1].raw_data());
  dnnl::memory diff_src(md, ctx.engine(), c.outputs[0].raw_data());
  ctx.execute(*backward, {{DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DST, dst}, {DNNL_ARG_DIFF_SRC, diff_src}},
              c.inputs[0].numel());
}

template void dnnl_softmax_rows<false>(Runtime&, const SoftmaxRows&, const float*, float*);
template void dnnl_softmax_rows<true>(Runtime&, const SoftmaxRows&, const float*, float*);
template void softmax_dnnl_kernel<false>(const KernelCall&);
template void softmax_dnnl_kernel<true>(const KernelCall&);
template void softmax_backward_dnnl_kernel<false>(const KernelCall&);
template void softmax_backward_dnnl_kernel<true>(const KernelCall&);

}  // namespace kiln::reduction
