// Resampling of [N, C, H, W] as torch.nn.functional.interpolate in the
// modes "nearest" and "bilinear": the geometry (output size from `size` or
// `scale_factor`, and where each output pixel reads the input) shared by
// the CPU and CUDA kernels of upsample_nearest2d, upsample_bilinear2d and
// their backward ops.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ops/op_def.hpp"
#include "kiln/util/host_device.hpp"

namespace kiln::nn {

// One spatial axis: `scale` is the input step per output step. PyTorch
// takes it as 1 / scale_factor where a scale_factor was given (so a 2.5x
// resize of 5 pixels samples as 2.5x, not 12 / 5), in / out otherwise, and
// (in - 1) / (out - 1) when aligning corners.
struct ResampleAxis {
  int64_t in = 1, out = 1;
  double scale = 1;
};

enum class ResampleMode { nearest, bilinear };

struct Upsample2dGeometry {
  int64_t planes = 0;  // N * C
  ResampleAxis h, w;
  ResampleMode mode = ResampleMode::nearest;
  bool align_corners = false;

  Shape output_shape(const Shape& input) const { return {input[0], input[1], h.out, w.out}; }
};

// The attributes of the forward op, and of the backward op (plus
// "input_shape") when `for_backward`.
std::vector<AttrSpec> upsample2d_attrs(ResampleMode mode, bool for_backward);

// Reads size / scale_factor (and align_corners, whose presence in the
// schema makes the op bilinear) of `op` and checks them against an input of
// shape `input`; throws naming the op.
Upsample2dGeometry upsample2d_geometry(const OpDef& op, const Attrs& attrs, const Shape& input);

// The input index output index `dst` copies in nearest mode (as PyTorch's
// "nearest", which floors and is not centred).
KILN_HOST_DEVICE inline int64_t nearest_source(const ResampleAxis& a, int64_t dst) {
  const auto src = int64_t(double(dst) * a.scale);  // floor: the product is never negative
  return src < a.in - 1 ? src : a.in - 1;
}

// The two input indices output index `dst` blends in bilinear mode, and
// their weights.
struct LinearTaps {
  int64_t i0, i1;
  double w0, w1;
};

KILN_HOST_DEVICE inline LinearTaps linear_taps(const ResampleAxis& a, bool align_corners, int64_t dst) {
  double src = align_corners ? a.scale * double(dst) : a.scale * (double(dst) + 0.5) - 0.5;
  if (src < 0) src = 0;
  int64_t i0 = int64_t(src);
  if (i0 > a.in - 1) i0 = a.in - 1;
  const int64_t i1 = i0 < a.in - 1 ? i0 + 1 : i0;  // the last index blends with itself
  const double w1 = src - double(i0);
  return {i0, i1, 1 - w1, w1};
}

// Calls fn(k, weight) for each input pixel k (an offset in its plane) that
// output pixel (i, j) reads, with its weight.
template <class Fn>
KILN_HOST_DEVICE void for_each_tap(const Upsample2dGeometry& g, int64_t i, int64_t j, Fn&& fn) {
  if (g.mode == ResampleMode::nearest) {
    fn(nearest_source(g.h, i) * g.w.in + nearest_source(g.w, j), 1.0);
    return;
  }
  const LinearTaps y = linear_taps(g.h, g.align_corners, i), x = linear_taps(g.w, g.align_corners, j);
  fn(y.i0 * g.w.in + x.i0, y.w0 * x.w0);
  fn(y.i0 * g.w.in + x.i1, y.w0 * x.w1);
  fn(y.i1 * g.w.in + x.i0, y.w1 * x.w0);
  fn(y.i1 * g.w.in + x.i1, y.w1 * x.w1);
}

}  // namespace kiln::nn
