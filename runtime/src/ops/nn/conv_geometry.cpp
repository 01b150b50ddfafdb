#include "conv_geometry.hpp"

#include "kiln/error.hpp"
#include "kiln/ops/helpers.hpp"

namespace kiln::nn {
namespace {

std::array<int64_t, 2> pair_attr(const OpDef& op, const Attrs& attrs, const char* name, int64_t min) {
  const std::vector<int64_t>& v = op.attr_ints(attrs, name);
  KILN_CHECK(v.size() == 2, Status::invalid_argument, "op '", op.name, "': ", name,
             " must have 2 values (height, width), got ", v.size());
  KILN_CHECK(v[0] >= min && v[1] >= min, Status::invalid_argument, "op '", op.name, "': ", name, " must be >= ", min,
             ", got [", v[0], ", ", v[1], "]");
  return {v[0], v[1]};
}

}  // namespace

std::vector<AttrSpec> conv2d_attrs() {
  return {attr_ints("stride", {1, 1}), attr_ints("padding", {0, 0}), attr_ints("dilation", {1, 1}),
          attr_int("groups", 1)};
}

Conv2dGeometry conv2d_geometry(const OpDef& op, const Attrs& attrs, const Shape& input, const Shape& weight) {
  KILN_CHECK(input.rank() == 4, Status::shape_mismatch, "op '", op.name,
             "': input must be [N, C, H, W] (rank 4), got ", to_string(input));
  KILN_CHECK(weight.rank() == 4, Status::shape_mismatch, "op '", op.name,
             "': weight must be [O, C/groups, KH, KW] (rank 4), got ", to_string(weight));
  Conv2dGeometry g{};
  g.n = input[0], g.c = input[1], g.h = input[2], g.w = input[3];
  g.o = weight[0], g.kh = weight[2], g.kw = weight[3];
  g.stride = pair_attr(op, attrs, "stride", 1);
  g.padding = pair_attr(op, attrs, "padding", 0);
  g.dilation = pair_attr(op, attrs, "dilation", 1);
  g.groups = op.attr_int(attrs, "groups");
  KILN_CHECK(g.groups >= 1, Status::invalid_argument, "op '", op.name, "': groups must be >= 1, got ", g.groups);
  KILN_CHECK(g.c % g.groups == 0 && g.o % g.groups == 0, Status::shape_mismatch, "op '", op.name, "': input ",
             to_string(input), " has ", g.c, " channels and weight ", to_string(weight), " has ", g.o,
             " output channels; both must be divisible by groups = ", g.groups);
  KILN_CHECK(weight[1] * g.groups == g.c, Status::shape_mismatch, "op '", op.name, "': weight ", to_string(weight),
             " expects ", weight[1] * g.groups, " input channels (", weight[1], " per group x ", g.groups,
             " groups) but input ", to_string(input), " has ", g.c);
  const int64_t extent_h = g.dilation[0] * (g.kh - 1) + 1, extent_w = g.dilation[1] * (g.kw - 1) + 1;
  const int64_t padded_h = g.h + 2 * g.padding[0], padded_w = g.w + 2 * g.padding[1];
  KILN_CHECK(g.kh >= 1 && g.kw >= 1 && extent_h <= padded_h && extent_w <= padded_w, Status::shape_mismatch, "op '",
             op.name, "': kernel ", g.kh, "x", g.kw, " (dilated extent ", extent_h, "x", extent_w,
             ") does not fit the padded input ", padded_h, "x", padded_w, " (input ", to_string(input), ", weight ",
             to_string(weight), ")");
  g.oh = (padded_h - extent_h) / g.stride[0] + 1;
  g.ow = (padded_w - extent_w) / g.stride[1] + 1;
  return g;
}

}  // namespace kiln::nn
