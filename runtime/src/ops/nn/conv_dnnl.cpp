// conv2d on oneDNN, plain NCHW/OIHW layouts so kiln tensors are used in place.
// Primitives are cached by geometry; the backward primitives need the forward
// descriptor as a hint, which the cache builds alongside them.
#include "conv_kernels.hpp"
#include "dnnl_helpers.hpp"
#include "kiln/error.hpp"
#include "kiln/util/str_cat.hpp"

namespace kiln::nn {
namespace {

using dnnl::memory;

// The memory descriptors and window parameters of one geometry.
struct ConvDescs {
  memory::desc src, weights, bias, dst;
  memory::dims strides, dilates, padding;

  explicit ConvDescs(const Conv2dGeometry& g)
      : src(f32_desc(g.input_shape())),
        weights(grouped_weights(g)),
        bias(f32_desc(Shape{g.o})),
        dst(f32_desc(g.output_shape())),
        strides{g.stride[0], g.stride[1]},
        // oneDNN counts dilation from 0 (no gap), kiln from 1.
        dilates{g.dilation[0] - 1, g.dilation[1] - 1},
        padding{g.padding[0], g.padding[1]} {}

  // A grouped weight [O, C/G, KH, KW] is, in the same memory, [G, O/G, C/G, KH, KW].
  static memory::desc grouped_weights(const Conv2dGeometry& g) {
    if (g.groups == 1) return f32_desc(g.weight_shape());
    return f32_desc(Shape{g.groups, g.o_per_group(), g.c_per_group(), g.kh, g.kw});
  }

  dnnl::convolution_forward::primitive_desc forward_pd(const dnnl::engine& engine, bool with_bias) const {
    const auto kind = dnnl::prop_kind::forward_training;
    const auto algo = dnnl::algorithm::convolution_direct;
    const auto desc = with_bias ? dnnl::convolution_forward::desc(kind, algo, src, weights, bias, dst, strides,
                                                                  dilates, padding, padding)
                                : dnnl::convolution_forward::desc(kind, algo, src, weights, dst, strides, dilates,
                                                                  padding, padding);
    return {desc, engine};
  }
};

std::string geometry_key(const char* what, const Conv2dGeometry& g) {
  return str_cat(what, ":", to_string(g.input_shape()), to_string(g.weight_shape()), "s", g.stride[0], ",",
                 g.stride[1], "p", g.padding[0], ",", g.padding[1], "d", g.dilation[0], ",", g.dilation[1], "g",
                 g.groups);
}

// The cached primitive `what` for geometry g; a layout oneDNN cannot run
// becomes a kiln error rather than a dnnl::error escaping the op.
template <class Prim, class Make>
std::shared_ptr<Prim> cached_primitive(DnnlContext& ctx, const char* what, const Conv2dGeometry& g, Make make) {
  const std::string key = geometry_key(what, g);
  return ctx.cached<Prim>(key, [&]() -> Prim {
    try {
      return make();
    } catch (const dnnl::error& e) {
      throw_error(Status::unsupported, str_cat("op 'conv2d': oneDNN has no implementation for ", key, " (",
                                                e.what(), ")"));
    }
  });
}

}  // namespace

void conv2d_forward_dnnl(Runtime& rt, const Conv2dGeometry& g, const Tensor& input, const Tensor& weight,
                         const Tensor& bias, Tensor& output) {
  DnnlContext& ctx = rt.dnnl();
  const ConvDescs d(g);
  const bool with_bias = bias.defined();
  const auto prim = cached_primitive<dnnl::convolution_forward>(
      ctx, with_bias ? "conv2d_fwd_bias" : "conv2d_fwd", g, [&] { return dnnl::convolution_forward(d.forward_pd(ctx.engine(), with_bias)); });
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, wrap(ctx, d.src, input.raw_data())},
                                       {DNNL_ARG_WEIGHTS, wrap(ctx, d.weights, weight.raw_data())},
                                       {DNNL_ARG_DST, wrap(ctx, d.dst, output.raw_data())}};
  if (with_bias) args.emplace(DNNL_ARG_BIAS, wrap(ctx, d.bias, bias.raw_data()));
  execute(ctx, *prim, args);
}

void conv2d_backward_input_dnnl(Runtime& rt, const Conv2dGeometry& g, const Tensor& grad_output,
                                const Tensor& weight, Tensor& grad_input) {
  DnnlContext& ctx = rt.dnnl();
  const ConvDescs d(g);
  const auto prim = cached_primitive<dnnl::convolution_backward_data>(ctx, "conv2d_bwd_data", g, [&] {
    const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, d.src, d.weights, d.dst,
                                                     d.strides, d.dilates, d.padding, d.padding);
    return dnnl::convolution_backward_data(
        dnnl::convolution_backward_data::primitive_desc(desc, ctx.engine(), d.forward_pd(ctx.engine(), false)));
  });
  execute(ctx, *prim,
          {{DNNL_ARG_DIFF_DST, wrap(ctx, d.dst, grad_output.raw_data())},
           {DNNL_ARG_WEIGHTS, wrap(ctx, d.weights, weight.raw_data())},
           {DNNL_ARG_DIFF_SRC, wrap(ctx, d.src, grad_input.raw_data())}});
}

void conv2d_backward_weight_dnnl(Runtime& rt, const Conv2dGeometry& g, const Tensor& grad_output,
                                 const Tensor& input, Tensor& grad_weight) {
  DnnlContext& ctx = rt.dnnl();
  const ConvDescs d(g);
  const auto prim = cached_primitive<dnnl::convolution_backward_weights>(ctx, "conv2d_bwd_weights", g, [&] {
    const dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, d.src, d.weights,
                                                        d.dst, d.strides, d.dilates, d.padding, d.padding);
    return dnnl::convolution_backward_weights(
        dnnl::convolution_backward_weights::primitive_desc(desc, ctx.engine(), d.forward_pd(ctx.engine(), false)));
  });
  execute(ctx, *prim,
          {{DNNL_ARG_DIFF_DST, wrap(ctx, d.dst, grad_output.raw_data())},
           {DNNL_ARG_SRC, wrap(ctx, d.src, input.raw_data())},
           {DNNL_ARG_DIFF_WEIGHTS, wrap(ctx, d.weights, grad_weight.raw_data())}});
}

}  // namespace kiln::nn
