#include "pool_geometry.hpp"

#include "kiln/ops/helpers.hpp"

namespace kiln::nn {
namespace {

struct Pair {
  int64_t h, w;
};

// A one- or two-element attribute ([k] means [k, k]); `fallback` when empty
// and one is allowed.
Pair read_pair(const OpDef& op, const Attrs& attrs, const char* name, const Pair* fallback) {
  const std::vector<int64_t>& v = op.attr_ints(attrs, name);
  if (v.empty() && fallback) return *fallback;
  KILN_CHECK(v.size() == 1 || v.size() == 2, Status::invalid_argument, "op '", op.name, "': ", name,
             " takes 1 or 2 values (height, width), got ", v.size());
  return v.size() == 1 ? Pair{v[0], v[0]} : Pair{v[0], v[1]};
}

}  // namespace

int64_t pool_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool ceil_mode) {
  const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (span + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

std::vector<AttrSpec> pool2d_attrs(PoolKind kind, bool for_backward) {
  std::vector<AttrSpec> attrs = {attr_required("kernel_size", AttrType::ints), attr_ints("stride", {}),
                                 attr_ints("padding", {0, 0})};
  if (kind == PoolKind::max) attrs.push_back(attr_ints("dilation", {1, 1}));
  attrs.push_back(attr_bool("ceil_mode", false));
  if (kind == PoolKind::average) attrs.push_back(attr_bool("count_include_pad", true));
  if (for_backward) attrs.push_back(attr_required("input_shape", AttrType::ints));
  return attrs;
}

Pool2dGeometry pool2d_geometry(const OpDef& op, const Attrs& attrs, const Shape& input) {
  KILN_CHECK(input.rank() == 4, Status::shape_mismatch, "op '", op.name,
             "': input must be [N, C, H, W] (rank 4), got shape ", to_string(input));
  const Pair kernel = read_pair(op, attrs, "kernel_size", nullptr);
  const Pair stride = read_pair(op, attrs, "stride", &kernel);
  const Pair pad = read_pair(op, attrs, "padding", nullptr);
  const Pair one{1, 1};
  const Pair dilation = op.attr_index("dilation") >= 0 ? read_pair(op, attrs, "dilation", nullptr) : one;
  const bool ceil_mode = op.attr_bool(attrs, "ceil_mode");

  KILN_CHECK(kernel.h > 0 && kernel.w > 0 && stride.h > 0 && stride.w > 0 && dilation.h > 0 && dilation.w > 0,
             Status::invalid_argument, "op '", op.name, "': kernel_size, stride and dilation must be positive, got ",
             kernel.h, "x", kernel.w, ", ", stride.h, "x", stride.w, " and ", dilation.h, "x", dilation.w);
  KILN_CHECK(pad.h >= 0 && pad.w >= 0 && pad.h <= kernel.h / 2 && pad.w <= kernel.w / 2, Status::invalid_argument,
             "op '", op.name, "': padding ", pad.h, "x", pad.w, " must be between 0 and half the ", kernel.h, "x",
             kernel.w, " window");

  Pool2dGeometry g;
  g.n = input[0];
  g.c = input[1];
  g.h = input[2];
  g.w = input[3];
  g.kernel_h = kernel.h;
  g.kernel_w = kernel.w;
  g.stride_h = stride.h;
  g.stride_w = stride.w;
  g.pad_h = pad.h;
  g.pad_w = pad.w;
  g.dilation_h = dilation.h;
  g.dilation_w = dilation.w;
  g.out_h = pool_output_size(g.h, kernel.h, stride.h, pad.h, dilation.h, ceil_mode);
  g.out_w = pool_output_size(g.w, kernel.w, stride.w, pad.w, dilation.w, ceil_mode);
  KILN_CHECK(g.out_h >= 1 && g.out_w >= 1, Status::shape_mismatch, "op '", op.name, "': a ",
             dilation.h * (kernel.h - 1) + 1, "x", dilation.w * (kernel.w - 1) + 1, " window (padding ", pad.h, "x",
             pad.w, ") does not fit a ", g.h, "x", g.w, " input (shape ", to_string(input),
             "); the output would be ", g.out_h, "x", g.out_w);
  return g;
}

Attrs with_input_shape(const Attrs& forward, const Shape& input) {
  std::vector<AttrValue> values;
  for (size_t i = 0; i < forward.size(); ++i) values.push_back(forward[i]);
  values.emplace_back(std::vector<int64_t>(input.begin(), input.end()));
  return Attrs(std::move(values));
}

Shape pool_input_shape_attr(const OpDef& op, const Attrs& attrs) {
  return shape_from_attr(op, op.attr_ints(attrs, "input_shape"), "input_shape");
}

void check_pool_grad_output(const OpDef& op, const Shape& grad_output, const Shape& expected) {
  KILN_CHECK(grad_output == expected, Status::shape_mismatch, "op '", op.name, "': grad_output has shape ",
             to_string(grad_output), " but the forward produced ", to_string(expected));
}

}  // namespace kiln::nn
