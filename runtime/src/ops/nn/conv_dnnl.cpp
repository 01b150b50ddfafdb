// conv2d on oneDNN. kiln tensors are plain NCHW/OIHW, but oneDNN runs
// convolutions on plain layouts through its gemm fallback, several times
// slower than its direct kernels (worst for the weight gradient). So each
// primitive is created with the layouts left to oneDNN (format any), and
// the plain buffers are reordered into the layouts it chose and back; the
// reorders cost far less than they save. Primitives are cached by geometry
// with their chosen layouts; the backward primitives need the forward
// descriptor as a hint, which the cache builds alongside them.
//
// Every tensor of one call has the same dtype: f32 or bf16, which
// oneDNN accumulates in f32 and rounds once into the result.
//
// Unless the runtime asks for direct convolutions only, each pass is left
// to oneDNN's choice of algorithm (convolution_auto): on CPUs with AVX-512
// it may run 3x3 stride-1 f32 convolutions with Winograd's F(4x4, 3x3) where
// its rules expect a gain; the largest error, about 2e-6 of the largest
// value, is four to five times the direct kernels' -- the trade cuDNN makes
// on a GPU too. Elsewhere auto is direct. kiln's own Winograd kernels
// (conv_winograd.hpp) take the 3x3 and 5x5 stride-1 ones they fit first,
// on any CPU with AVX2, so oneDNN's choice only meets the others.
#include <vector>

#include "conv_kernels.hpp"
#include "dnnl_helpers.hpp"
#include "dnnl_precision.hpp"
#include "kiln/error.hpp"
#include "kiln/util/str_cat.hpp"

namespace kiln::nn {
namespace {

using dnnl::memory;

// The memory descriptors and window parameters of one geometry: the plain
// layouts of kiln's tensors, and the same shapes with the layout left open.
struct ConvDescs {
  memory::desc src, weights, bias, dst;
  memory::desc any_src, any_weights, any_dst;
  memory::dims strides, dilates, padding;
  dnnl::algorithm algorithm;

  ConvDescs(const Conv2dGeometry& g, DType dtype, const RuntimeOptions& options)
      : src(typed_desc(g.input_shape(), dtype)),
        weights(grouped_weights(g, dtype)),
        bias(typed_desc(Shape{g.o}, dtype)),
        dst(typed_desc(g.output_shape(), dtype)),
        any_src(open_layout(src)),
        any_weights(open_layout(weights)),
        any_dst(open_layout(dst)),
        strides{g.stride[0], g.stride[1]},
        // oneDNN counts dilation from 0 (no gap), kiln from 1.
        dilates{g.dilation[0] - 1, g.dilation[1] - 1},
        padding{g.padding[0], g.padding[1]},
        algorithm(options.direct_convolutions ? dnnl::algorithm::convolution_direct
                                              : dnnl::algorithm::convolution_auto) {}

  // A grouped weight [O, C/G, KH, KW] is, in the same memory, [G, O/G, C/G, KH, KW].
  static memory::desc grouped_weights(const Conv2dGeometry& g, DType dtype) {
    if (g.groups == 1) return typed_desc(g.weight_shape(), dtype);
    return typed_desc(Shape{g.groups, g.o_per_group(), g.c_per_group(), g.kh, g.kw}, dtype);
  }
  static memory::desc open_layout(const memory::desc& plain) {
    return memory::desc(plain.dims(), plain.data_type(), memory::format_tag::any);
  }

  dnnl::convolution_forward::primitive_desc forward_pd(const dnnl::engine& engine, bool with_bias) const {
    const auto kind = dnnl::prop_kind::forward_training;
    const auto desc =
        with_bias ? dnnl::convolution_forward::desc(kind, algorithm, any_src, any_weights, bias, any_dst, strides,
                                                    dilates, padding, padding)
                  : dnnl::convolution_forward::desc(kind, algorithm, any_src, any_weights, any_dst, strides, dilates,
                                                    padding, padding);
    return {desc, engine};
  }
};

// A primitive and the layouts it chose for its arguments.
template <class Prim>
struct ChosenPrimitive {
  Prim prim;
  std::unordered_map<int, memory::desc> layouts;  // by DNNL_ARG_*
};

template <class Prim, class PrimitiveDesc>
ChosenPrimitive<Prim> choose(const PrimitiveDesc& pd, std::initializer_list<std::pair<int, memory::desc>> layouts) {
  return {Prim(pd), std::unordered_map<int, memory::desc>(layouts.begin(), layouts.end())};
}

// One argument of a convolution: a kiln buffer in its plain layout.
struct ConvArg {
  int id;
  memory::desc plain;
  const void* data;
  bool output;
};

// Runs `c` on kiln's plain buffers: inputs whose chosen layout differs are
// reordered into scratch memory first, outputs are reordered back after.
// The scratch comes from the runtime's caching allocator: oneDNN's own
// would take fresh pages from the system, and clear them, on every call.
template <class Prim>
void execute_in_chosen_layouts(Runtime& rt, const Conv2dGeometry& g, const ChosenPrimitive<Prim>& c,
                               const std::vector<ConvArg>& args) {
  DnnlContext& ctx = rt.dnnl();
  std::unordered_map<int, memory> prim_args;
  std::vector<std::pair<memory, memory>> before, after;  // (from, to) reorders
  std::vector<Tensor> scratch_buffers;
  for (const ConvArg& a : args) {
    memory plain = wrap(ctx, a.plain, a.data);
    const auto chosen = c.layouts.find(a.id);
    if (chosen == c.layouts.end() || chosen->second == a.plain) {
      prim_args.emplace(a.id, plain);
      continue;
    }
    const Tensor& buffer =
        scratch_buffers.emplace_back(rt.empty(Shape{int64_t(chosen->second.get_size())}, DType::u8));
    memory scratch(chosen->second, ctx.engine(), buffer.raw_data());
    prim_args.emplace(a.id, scratch);
    if (a.output)
      after.emplace_back(scratch, plain);
    else
      before.emplace_back(plain, scratch);
  }
  // Every pass does the forward's multiply-adds.
  const int64_t multiply_adds = g.output_shape().numel() * g.c_per_group() * g.kh * g.kw;
  const auto lock = ctx.lock_for_execution(multiply_adds / DnnlContext::kMultiplyAddsPerElement);
  for (auto& [from, to] : before) dnnl::reorder(from, to).execute(ctx.stream(), from, to);
  c.prim.execute(ctx.stream(), prim_args);
  for (auto& [from, to] : after) dnnl::reorder(from, to).execute(ctx.stream(), from, to);
  ctx.stream().wait();
}

std::string geometry_key(const char* what, const Conv2dGeometry& g, DType dtype) {
  return str_cat(what, ":", dtype_name(dtype), to_string(g.input_shape()), to_string(g.weight_shape()), "s",
                 g.stride[0], ",", g.stride[1], "p", g.padding[0], ",", g.padding[1], "d", g.dilation[0], ",",
                 g.dilation[1], "g", g.groups);
}

// The cached primitive `what` for geometry g in `dtype`; a layout or dtype
// oneDNN cannot run becomes a kiln error naming the op rather than a
// dnnl::error escaping it.
template <class Prim, class Make>
std::shared_ptr<ChosenPrimitive<Prim>> cached_primitive(DnnlContext& ctx, const OpDef& op, const char* what,
                                                        const Conv2dGeometry& g, DType dtype, Make make) {
  check_cpu_dtype(op, dtype);
  const std::string key = geometry_key(what, g, dtype);
  return ctx.cached<ChosenPrimitive<Prim>>(key, [&]() -> ChosenPrimitive<Prim> {
    try {
      return make();
    } catch (const dnnl::error& e) {
      throw_no_dnnl_implementation(op, dtype, key, e.what());
    }
  });
}

}  // namespace

void conv2d_forward_dnnl(Runtime& rt, const OpDef& op, const Conv2dGeometry& g, const Tensor& input,
                         const Tensor& weight, const Tensor& bias, Tensor& output) {
  DnnlContext& ctx = rt.dnnl();
  const ConvDescs d(g, input.dtype(), rt.options());
  const bool with_bias = bias.defined();
  const auto c = cached_primitive<dnnl::convolution_forward>(
      ctx, op, with_bias ? "conv2d_fwd_bias" : "conv2d_fwd", g, input.dtype(), [&] {
        const auto pd = d.forward_pd(ctx.engine(), with_bias);
        return choose<dnnl::convolution_forward>(
            pd, {{DNNL_ARG_SRC, pd.src_desc()}, {DNNL_ARG_WEIGHTS, pd.weights_desc()}, {DNNL_ARG_DST, pd.dst_desc()}});
      });
  std::vector<ConvArg> args{{DNNL_ARG_SRC, d.src, input.raw_data(), false},
                            {DNNL_ARG_WEIGHTS, d.weights, weight.raw_data(), false},
                            {DNNL_ARG_DST, d.dst, output.raw_data(), true}};
  if (with_bias) args.push_back({DNNL_ARG_BIAS, d.bias, bias.raw_data(), false});
  execute_in_chosen_layouts(rt, g, *c, args);
}

void conv2d_backward_input_dnnl(Runtime& rt, const OpDef& op, const Conv2dGeometry& g, const Tensor& grad_output,
                                const Tensor& weight, Tensor& grad_input) {
  DnnlContext& ctx = rt.dnnl();
  const DType dtype = grad_output.dtype();
  const ConvDescs d(g, dtype, rt.options());
  const auto c = cached_primitive<dnnl::convolution_backward_data>(ctx, op, "conv2d_bwd_data", g, dtype, [&] {
    const dnnl::convolution_backward_data::desc desc(d.algorithm, d.any_src, d.any_weights,
                                                     d.any_dst, d.strides, d.dilates, d.padding, d.padding);
    const dnnl::convolution_backward_data::primitive_desc pd(desc, ctx.engine(), d.forward_pd(ctx.engine(), false));
    return choose<dnnl::convolution_backward_data>(pd, {{DNNL_ARG_DIFF_DST, pd.diff_dst_desc()},
                                                        {DNNL_ARG_WEIGHTS, pd.weights_desc()},
                                                        {DNNL_ARG_DIFF_SRC, pd.diff_src_desc()}});
  });
  execute_in_chosen_layouts(rt, g, *c,
                            {{DNNL_ARG_DIFF_DST, d.dst, grad_output.raw_data(), false},
                             {DNNL_ARG_WEIGHTS, d.weights, weight.raw_data(), false},
                             {DNNL_ARG_DIFF_SRC, d.src, grad_input.raw_data(), true}});
}

void conv2d_backward_weight_dnnl(Runtime& rt, const OpDef& op, const Conv2dGeometry& g, const Tensor& grad_output,
                                 const Tensor& input, Tensor& grad_weight) {
  DnnlContext& ctx = rt.dnnl();
  const DType dtype = grad_output.dtype();
  const ConvDescs d(g, dtype, rt.options());
  const auto c = cached_primitive<dnnl::convolution_backward_weights>(ctx, op, "conv2d_bwd_weights", g, dtype, [&] {
    const dnnl::convolution_backward_weights::desc desc(d.algorithm, d.any_src,
                                                        d.any_weights, d.any_dst, d.strides, d.dilates, d.padding,
                                                        d.padding);
    const dnnl::convolution_backward_weights::primitive_desc pd(desc, ctx.engine(),
                                                                d.forward_pd(ctx.engine(), false));
    return choose<dnnl::convolution_backward_weights>(pd, {{DNNL_ARG_DIFF_DST, pd.diff_dst_desc()},
                                                           {DNNL_ARG_SRC, pd.src_desc()},
                                                           {DNNL_ARG_DIFF_WEIGHTS, pd.diff_weights_desc()}});
  });
  execute_in_chosen_layouts(rt, g, *c,
                            {{DNNL_ARG_DIFF_DST, d.dst, grad_output.raw_data(), false},
                             {DNNL_ARG_SRC, d.src, input.raw_data(), false},
                             {DNNL_ARG_DIFF_WEIGHTS, d.weights, grad_weight.raw_data(), true}});
}

}  // namespace kiln::nn
