#include "pool_dnnl.hpp"

#include <algorithm>

#include "dnnl_helpers.hpp"
#include "kiln/util/str_cat.hpp"

namespace kiln::nn {
namespace {

// oneDNN wants the padding after the input explicitly: what the last window
// reaches past the input (ceil_mode can make it exceed the padding before).
int64_t padding_right(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  return std::max<int64_t>(0, (out - 1) * stride + dilation * (kernel - 1) + 1 - in - pad);
}

void run_pooling(Runtime& rt, const Pool2dGeometry& g, dnnl::algorithm algorithm, const Tensor& input,
                 Tensor& output) {
  using dnnl::memory;
  DnnlContext& ctx = rt.dnnl();
  const memory::dims pad_r = {padding_right(g.h, g.out_h, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h),
                              padding_right(g.w, g.out_w, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w)};
  const std::string key = str_cat("pool2d:", int(algorithm), ":", dtype_name(input.dtype()), to_string(input.shape()),
                                  ":", g.out_h, "x", g.out_w, ":k", g.kernel_h, "x", g.kernel_w, ":s", g.stride_h,
                                  "x", g.stride_w, ":p", g.pad_h, "x", g.pad_w, ":d", g.dilation_h, "x",
                                  g.dilation_w);
  const memory::desc src = typed_desc(input.shape(), input.dtype());
  const memory::desc dst = typed_desc(output.shape(), output.dtype());
  auto prim = ctx.cached<dnnl::pooling_v2_forward>(key, [&] {
    // oneDNN counts dilation from 0 (no gap), kiln from 1.
    const dnnl::pooling_v2_forward::desc desc(
        dnnl::prop_kind::forward_inference, algorithm, src, dst, {g.stride_h, g.stride_w}, {g.kernel_h, g.kernel_w},
        {g.dilation_h - 1, g.dilation_w - 1}, {g.pad_h, g.pad_w}, pad_r);
    return dnnl::pooling_v2_forward(dnnl::pooling_v2_forward::primitive_desc(desc, ctx.engine()));
  });
  ctx.execute(*prim, {{DNNL_ARG_SRC, wrap(ctx, src, input.raw_data())}, {DNNL_ARG_DST, wrap(ctx, dst, output.raw_data())}},
              input.numel());
}

}  // namespace

void dnnl_max_pool2d(Runtime& rt, const Pool2dGeometry& g, const Tensor& input, Tensor& output) {
  run_pooling(rt, g, dnnl::algorithm::pooling_max, input, output);
}

bool dnnl_avg_pool2d(Runtime& rt, const Pool2dGeometry& g, bool count_include_pad, const Tensor& input,
                     Tensor& output) {
  if (!count_include_pad) {
    run_pooling(rt, g, dnnl::algorithm::pooling_avg_exclude_padding, input, output);
    return true;
  }
  // oneDNN's divisor is always the full window; PyTorch's stops at the
  // padding, so they agree only while no window reaches past it.
  const int64_t pad_r_h = padding_right(g.h, g.out_h, g.kernel_h, g.stride_h, g.pad_h, 1);
  const int64_t pad_r_w = padding_right(g.w, g.out_w, g.kernel_w, g.stride_w, g.pad_w, 1);
  if (pad_r_h > g.pad_h || pad_r_w > g.pad_w) return false;
  run_pooling(rt, g, dnnl::algorithm::pooling_avg_include_padding, input, output);
  return true;
}

}  // namespace kiln::nn
