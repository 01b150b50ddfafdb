#include "norm_dnnl.hpp"

#include "dnnl_helpers.hpp"
#include "kiln/util/str_cat.hpp"

namespace kiln::nn {
namespace {

using dnnl::memory;
using dnnl::normalization_flags;

// Scale and shift flags for the weight and bias that were given.
normalization_flags affine_flags(const Tensor& weight, const Tensor& bias) {
  normalization_flags flags = normalization_flags::none;
  if (weight) flags = flags | normalization_flags::use_scale;
  if (bias) flags = flags | normalization_flags::use_shift;
  return flags;
}

// The weight and bias that were given, as oneDNN arguments (each [C]).
void add_affine_args(DnnlContext& ctx, const Tensor& weight, const Tensor& bias,
                     std::unordered_map<int, memory>& args) {
  if (weight) args.emplace(DNNL_ARG_SCALE, wrap(ctx, f32_desc(weight.shape()), weight.raw_data()));
  if (bias) args.emplace(DNNL_ARG_SHIFT, wrap(ctx, f32_desc(bias.shape()), bias.raw_data()));
}

}  // namespace

void dnnl_layer_norm(Runtime& rt, const Tensor& input, int64_t rows, int64_t size, const Tensor& weight,
                     const Tensor& bias, double eps, Tensor& output) {
  DnnlContext& ctx = rt.dnnl();
  const normalization_flags flags = affine_flags(weight, bias);
  const memory::desc data = f32_desc(Shape{rows, size});
  const std::string key = str_cat("layer_norm:", rows, "x", size, ":", int(flags), ":", eps);
  auto prim = ctx.cached<dnnl::layer_normalization_forward>(key, [&] {
    const dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, data, float(eps), flags);
    return dnnl::layer_normalization_forward(dnnl::layer_normalization_forward::primitive_desc(desc, ctx.engine()));
  });
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, wrap(ctx, data, input.raw_data())},
                                          {DNNL_ARG_DST, wrap(ctx, data, output.raw_data())}};
  add_affine_args(ctx, weight, bias, args);
  ctx.execute(*prim, args, rows * size);
}

}  // namespace kiln::nn
