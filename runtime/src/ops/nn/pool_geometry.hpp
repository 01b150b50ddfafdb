// The window geometry of 2-d pooling over [N, C, H, W]: attributes read and
// checked once, output sizes with PyTorch's rules (ceil_mode, and a last
// window that must start inside the input or its left padding).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ops/op_def.hpp"

namespace kiln::nn {

struct Pool2dGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;

  int64_t planes() const { return n * c; }
  Shape output_shape() const { return {n, c, out_h, out_w}; }
};

enum class PoolKind { max, average };

// The output size along one axis, as PyTorch's pooling_output_shape: floor
// or ceil of the window count, and in ceil mode the last window must start
// inside the input or its left padding.
int64_t pool_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool ceil_mode);

// Schema attributes of max_pool2d / avg_pool2d; their backward ops take the
// same ones plus "input_shape" when `for_backward`.
std::vector<AttrSpec> pool2d_attrs(PoolKind kind, bool for_backward);

// Reads the window attributes of `op` and checks them against an input of
// shape `input` ([N, C, H, W]); throws naming the op, the shapes and what was
// expected.
Pool2dGeometry pool2d_geometry(const OpDef& op, const Attrs& attrs, const Shape& input);

// Forward attributes followed by the input's shape: the attributes of the
// matching backward op, whose schema appends "input_shape" (pools, upsampling).
Attrs with_input_shape(const Attrs& forward, const Shape& input);

// The "input_shape" attribute of a pooling backward op.
Shape pool_input_shape_attr(const OpDef& op, const Attrs& attrs);
// Throws unless the incoming gradient has the shape the forward produced.
void check_pool_grad_output(const OpDef& op, const Shape& grad_output, const Shape& expected);

}  // namespace kiln::nn
