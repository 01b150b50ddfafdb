// upsample_nearest2d and upsample_bilinear2d over [N, C, H, W] and their
// backward ops, with torch.nn.functional.interpolate's semantics (modes
// "nearest" and "bilinear", align_corners, by size or scale_factor). Each
// output pixel reads at most four input pixels of its plane (upsample.hpp);
// the backward adds each output gradient into them, plane by plane.
#include <cmath>

#include "kiln/ops/helpers.hpp"
#include "kiln/runtime.hpp"
#include "nn_ops.hpp"
#include "pool_geometry.hpp"
#include "pool_window.hpp"
#include "upsample.hpp"

namespace kiln::nn {
namespace {

// The size of one output axis and its scale (upsample.hpp).
ResampleAxis resample_axis(int64_t in, int64_t size, double scale_factor, bool align_corners) {
  ResampleAxis a;
  a.in = in;
  a.out = size > 0 ? size : int64_t(std::floor(double(in) * scale_factor));
  if (align_corners)
    a.scale = a.out > 1 ? double(in - 1) / double(a.out - 1) : 0.0;
  else
    a.scale = size > 0 ? double(in) / double(a.out) : 1.0 / scale_factor;
  return a;
}

void upsample_infer(InferCall& c) {
  check_floating(c, 0);
  const Shape& s = c.inputs[0].shape();
  c.outputs.push_back({upsample2d_geometry(c.op, c.attrs, s).output_shape(s), c.inputs[0].dtype(), c.device});
}

template <class T>
void upsample_kernel(const KernelCall& c) {
  const Upsample2dGeometry g = upsample2d_geometry(c.op, c.attrs, c.inputs[0].shape());
  const T* in = c.inputs[0].data<T>();
  T* out = c.outputs[0].data<T>();
  const int64_t in_plane = g.h.in * g.w.in, out_plane = g.h.out * g.w.out;
  c.runtime.thread_pool().parallel_for(g.planes, plane_grain(out_plane), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* src = in + p * in_plane;
      for (int64_t i = 0; i < g.h.out; ++i)
        for (int64_t j = 0; j < g.w.out; ++j) {
          acc_t<T> v = 0;
          for_each_tap(g, i, j, [&](int64_t k, double weight) { v += acc_t<T>(weight) * load_acc(src[k]); });
          out[p * out_plane + i * g.w.out + j] = store_acc<T>(v);
        }
    }
  });
}

std::vector<Tensor> upsample_backward(const BackwardCall& c) {
  const OpDef& backward = c.runtime.op(c.op.name + "_backward");
  return {c.runtime.call1(backward, {c.grad_outputs[0]}, with_input_shape(c.attrs, c.input_meta[0].shape))};
}

// Input: grad_output. Output: the gradient of an input of shape input_shape.
void upsample_backward_infer(InferCall& c) {
  check_floating(c, 0);
  const Shape input = shape_from_attr(c.op, c.op.attr_ints(c.attrs, "input_shape"), "input_shape");
  const Shape expected = upsample2d_geometry(c.op, c.attrs, input).output_shape(input);
  KILN_CHECK(c.inputs[0].shape() == expected, Status::shape_mismatch, "op '", c.op.name, "': grad_output has shape ",
             to_string(c.inputs[0].shape()), " but the forward produced ", to_string(expected));
  c.outputs.push_back({input, c.inputs[0].dtype(), c.device});
}

template <class T>
void upsample_backward_kernel(const KernelCall& c) {
  const Upsample2dGeometry g = upsample2d_geometry(c.op, c.attrs, c.outputs[0].shape());
  const T* grad = c.inputs[0].data<T>();
  T* grad_in = c.outputs[0].data<T>();
  const int64_t in_plane = g.h.in * g.w.in, out_plane = g.h.out * g.w.out;
  c.runtime.thread_pool().parallel_for(g.planes, plane_grain(out_plane), [&](int64_t begin, int64_t end) {
    std::vector<acc_t<T>> sums(static_cast<size_t>(in_plane));
    for (int64_t p = begin; p < end; ++p) {
      std::fill(sums.begin(), sums.end(), acc_t<T>(0));
      for (int64_t i = 0; i < g.h.out; ++i)
        for (int64_t j = 0; j < g.w.out; ++j) {
          const acc_t<T> v = load_acc(grad[p * out_plane + i * g.w.out + j]);
          for_each_tap(g, i, j, [&](int64_t k, double weight) { sums[size_t(k)] += acc_t<T>(weight) * v; });
        }
      for (int64_t k = 0; k < in_plane; ++k) grad_in[p * in_plane + k] = store_acc<T>(sums[size_t(k)]);
    }
  });
}

void register_upsample(OpRegistry& r, const char* name, ResampleMode mode) {
  {
    OpDef op;
    op.name = name;
    op.inputs = {{"input"}};
    op.attrs = upsample2d_attrs(mode, false);
    op.infer = upsample_infer;
    op.backward = upsample_backward;
    op.saves_inputs = op.saves_outputs = false;
    op.set_kernel(DeviceType::cpu, DType::f32, upsample_kernel<float>);
    op.set_kernel(DeviceType::cpu, DType::f64, upsample_kernel<double>);
    op.set_kernel(DeviceType::cpu, DType::f16, upsample_kernel<Half>);
    op.set_kernel(DeviceType::cpu, DType::bf16, upsample_kernel<BFloat16>);
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = std::string(name) + "_backward";
    op.inputs = {{"grad_output"}};
    op.attrs = upsample2d_attrs(mode, true);
    op.infer = upsample_backward_infer;
    op.set_kernel(DeviceType::cpu, DType::f32, upsample_backward_kernel<float>);
    op.set_kernel(DeviceType::cpu, DType::f64, upsample_backward_kernel<double>);
    op.set_kernel(DeviceType::cpu, DType::f16, upsample_backward_kernel<Half>);
    op.set_kernel(DeviceType::cpu, DType::bf16, upsample_backward_kernel<BFloat16>);
    r.add(std::move(op));
  }
}

}  // namespace

std::vector<AttrSpec> upsample2d_attrs(ResampleMode mode, bool for_backward) {
  std::vector<AttrSpec> attrs = {attr_ints("size", {}), {"scale_factor", AttrType::reals, std::vector<double>{}}};
  if (mode == ResampleMode::bilinear) attrs.push_back(attr_bool("align_corners", false));
  if (for_backward) attrs.push_back(attr_required("input_shape", AttrType::ints));
  return attrs;
}

Upsample2dGeometry upsample2d_geometry(const OpDef& op, const Attrs& attrs, const Shape& input) {
  KILN_CHECK(input.rank() == 4, Status::shape_mismatch, "op '", op.name,
             "': input must be [N, C, H, W] (rank 4), got shape ", to_string(input));
  const std::vector<int64_t>& size = op.attr_ints(attrs, "size");
  const auto& scale = std::get<std::vector<double>>(op.attr(attrs, "scale_factor"));
  KILN_CHECK(size.empty() != scale.empty(), Status::invalid_argument, "op '", op.name, "': ",
             size.empty() ? "either size or scale_factor should be defined"
                          : "only one of size or scale_factor should be defined");
  KILN_CHECK(size.size() <= 2 && scale.size() <= 2, Status::invalid_argument, "op '", op.name,
             "': size and scale_factor take 1 or 2 values (height, width), got ", size.size() + scale.size());
  for (int64_t v : size)
    KILN_CHECK(v > 0, Status::invalid_argument, "op '", op.name, "': size must be positive, got ", v);
  for (double v : scale)
    KILN_CHECK(v > 0 && std::isfinite(v), Status::invalid_argument, "op '", op.name,
               "': scale_factor must be positive and finite, got ", v);
  Upsample2dGeometry g;
  g.planes = input[0] * input[1];
  g.mode = op.attr_index("align_corners") >= 0 ? ResampleMode::bilinear : ResampleMode::nearest;
  g.align_corners = g.mode == ResampleMode::bilinear && op.attr_bool(attrs, "align_corners");
  const auto at = [](const auto& v, size_t i) { return v.empty() ? 0 : v[std::min(i, v.size() - 1)]; };
  g.h = resample_axis(input[2], at(size, 0), at(scale, 0), g.align_corners);
  g.w = resample_axis(input[3], at(size, 1), at(scale, 1), g.align_corners);
  KILN_CHECK(g.h.in > 0 && g.w.in > 0 && g.h.out > 0 && g.w.out > 0, Status::shape_mismatch, "op '", op.name,
             "': input and output sizes should be greater than 0, but got input (H: ", g.h.in, ", W: ", g.w.in,
             ") output (H: ", g.h.out, ", W: ", g.w.out, ")");
  return g;
}

}  // namespace kiln::nn

namespace kiln {

void register_upsample_ops(OpRegistry& r) {
  nn::register_upsample(r, "upsample_nearest2d", nn::ResampleMode::nearest);
  nn::register_upsample(r, "upsample_bilinear2d", nn::ResampleMode::bilinear);
}

}  // namespace kiln
