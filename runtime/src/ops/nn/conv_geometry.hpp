// The shapes of a 2-D convolution, validated once from the attributes and the
// input/weight shapes; shared by conv2d, its backward ops and their kernels.
//   input [N, C, H, W], weight [O, C/groups, KH, KW] -> output [N, O, OH, OW]
//   OH = (H + 2*pad_h - dil_h*(KH-1) - 1) / stride_h + 1   (likewise OW)
#pragma once

#include <array>

#include "kiln/ops/op_def.hpp"

namespace kiln::nn {

struct Conv2dGeometry {
  int64_t n, c, h, w;     // input
  int64_t o, kh, kw;      // weight (its channel dim is c / groups)
  int64_t oh, ow;         // output spatial size
  int64_t groups;
  std::array<int64_t, 2> stride, padding, dilation;

  int64_t c_per_group() const { return c / groups; }
  int64_t o_per_group() const { return o / groups; }
  Shape input_shape() const { return {n, c, h, w}; }
  Shape weight_shape() const { return {o, c / groups, kh, kw}; }
  Shape output_shape() const { return {n, o, oh, ow}; }
};

// Reads stride, padding, dilation and groups from `attrs` and checks them
// against the shapes; throws naming the op, the shapes and the reason.
Conv2dGeometry conv2d_geometry(const OpDef& op, const Attrs& attrs, const Shape& input, const Shape& weight);

// The conv attributes shared by conv2d and its backward ops.
std::vector<AttrSpec> conv2d_attrs();

}  // namespace kiln::nn
