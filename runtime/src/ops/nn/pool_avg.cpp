// avg_pool2d and adaptive_avg_pool2d over [N, C, H, W], with their backward
// ops. PyTorch semantics: avg_pool2d divides by the window's size including
// the padding it covers (count_include_pad) or by its in-input elements;
// adaptive bins run from floor(i * H / oh) to ceil((i + 1) * H / oh).
#include <algorithm>

#include "kiln/ops/helpers.hpp"
#include "pool_dnnl.hpp"
#include "pool_geometry.hpp"
#include "pool_ops.hpp"
#include "pool_window.hpp"

namespace kiln::nn {
namespace {

PlaneDims plane_dims(const Pool2dGeometry& g) { return {g.planes(), g.h, g.w, g.out_h, g.out_w}; }

// ---- avg_pool2d ------------------------------------------------------------

struct AvgPoolWindows {
  const Pool2dGeometry& g;
  bool count_include_pad;

  AverageWindow operator()(int64_t i, int64_t j) const {
    int64_t h0 = i * g.stride_h - g.pad_h, w0 = j * g.stride_w - g.pad_w;
    // Clipped at the padding first: what ceil_mode reaches past it never counts.
    int64_t h1 = std::min(h0 + g.kernel_h, g.h + g.pad_h), w1 = std::min(w0 + g.kernel_w, g.w + g.pad_w);
    const int64_t padded = (h1 - h0) * (w1 - w0);
    h0 = std::max<int64_t>(h0, 0);
    w0 = std::max<int64_t>(w0, 0);
    h1 = std::min(h1, g.h);
    w1 = std::min(w1, g.w);
    return {h0, h1, w0, w1, count_include_pad ? padded : (h1 - h0) * (w1 - w0)};
  }
};

void avg_pool_infer(InferCall& c) {
  check_floating(c, 0);
  const Pool2dGeometry g = pool2d_geometry(c.op, c.attrs, c.inputs[0].shape());
  c.outputs.push_back({g.output_shape(), c.inputs[0].dtype(), c.device});
}

template <class T>
void avg_pool_kernel(const KernelCall& c) {
  const Pool2dGeometry g = pool2d_geometry(c.op, c.attrs, c.inputs[0].shape());
  const bool include_pad = c.op.attr_bool(c.attrs, "count_include_pad");
  if constexpr (std::is_same_v<T, float>) {
    if (dnnl_avg_pool2d(c.runtime, g, include_pad, c.inputs[0], c.outputs[0])) return;
  }
  average_windows_forward(c.runtime.thread_pool(), plane_dims(g), c.inputs[0].data<T>(), c.outputs[0].data<T>(),
                          AvgPoolWindows{g, include_pad});
}

std::vector<Tensor> avg_pool_backward(const BackwardCall& c) {
  const OpDef& op = c.runtime.op("avg_pool2d_backward");
  return {c.runtime.call1(op, {c.grad_outputs[0]}, with_input_shape(c.attrs, c.inputs[0].shape()))};
}

void avg_pool_backward_infer(InferCall& c) {
  check_floating(c, 0);
  const Shape input = pool_input_shape_attr(c.op, c.attrs);
  const Pool2dGeometry g = pool2d_geometry(c.op, c.attrs, input);
  check_pool_grad_output(c.op, c.inputs[0].shape(), g.output_shape());
  c.outputs.push_back({input, c.inputs[0].dtype(), c.device});
}

template <class T>
void avg_pool_backward_kernel(const KernelCall& c) {
  const Pool2dGeometry g = pool2d_geometry(c.op, c.attrs, c.outputs[0].shape());
  average_windows_backward(c.runtime.thread_pool(), plane_dims(g), c.inputs[0].data<T>(), c.outputs[0].data<T>(),
                           AvgPoolWindows{g, c.op.attr_bool(c.attrs, "count_include_pad")});
}

// ---- adaptive_avg_pool2d ---------------------------------------------------

struct AdaptiveWindows {
  const PlaneDims& d;

  AverageWindow operator()(int64_t i, int64_t j) const {
    const int64_t h0 = i * d.h / d.out_h, h1 = ((i + 1) * d.h + d.out_h - 1) / d.out_h;
    const int64_t w0 = j * d.w / d.out_w, w1 = ((j + 1) * d.w + d.out_w - 1) / d.out_w;
    return {h0, h1, w0, w1, (h1 - h0) * (w1 - w0)};
  }
};

// The planes of an adaptive pool from `input` and the output_size attribute.
PlaneDims adaptive_dims(const OpDef& op, const Attrs& attrs, const Shape& input) {
  KILN_CHECK(input.rank() == 4, Status::shape_mismatch, "op '", op.name,
             "': input must be [N, C, H, W] (rank 4), got shape ", to_string(input));
  const std::vector<int64_t>& size = op.attr_ints(attrs, "output_size");
  KILN_CHECK(size.size() == 1 || size.size() == 2, Status::invalid_argument, "op '", op.name,
             "': output_size takes 1 or 2 values (height, width), got ", size.size());
  const int64_t oh = size[0], ow = size.back();
  KILN_CHECK(oh > 0 && ow > 0, Status::invalid_argument, "op '", op.name, "': output_size must be positive, got ", oh,
             "x", ow);
  KILN_CHECK(input[2] > 0 && input[3] > 0, Status::shape_mismatch, "op '", op.name,
             "': input must have a non-empty H x W plane, got shape ", to_string(input));
  return {input[0] * input[1], input[2], input[3], oh, ow};
}

Shape adaptive_output_shape(const Shape& input, const PlaneDims& d) { return {input[0], input[1], d.out_h, d.out_w}; }

void adaptive_infer(InferCall& c) {
  check_floating(c, 0);
  const Shape& input = c.inputs[0].shape();
  c.outputs.push_back({adaptive_output_shape(input, adaptive_dims(c.op, c.attrs, input)), c.inputs[0].dtype(), c.device});
}

template <class T>
void adaptive_kernel(const KernelCall& c) {
  const PlaneDims d = adaptive_dims(c.op, c.attrs, c.inputs[0].shape());
  average_windows_forward(c.runtime.thread_pool(), d, c.inputs[0].data<T>(), c.outputs[0].data<T>(), AdaptiveWindows{d});
}

std::vector<Tensor> adaptive_backward(const BackwardCall& c) {
  const OpDef& op = c.runtime.op("adaptive_avg_pool2d_backward");
  return {c.runtime.call1(op, {c.grad_outputs[0]}, with_input_shape(c.attrs, c.inputs[0].shape()))};
}

void adaptive_backward_infer(InferCall& c) {
  check_floating(c, 0);
  const Shape input = pool_input_shape_attr(c.op, c.attrs);
  check_pool_grad_output(c.op, c.inputs[0].shape(), adaptive_output_shape(input, adaptive_dims(c.op, c.attrs, input)));
  c.outputs.push_back({input, c.inputs[0].dtype(), c.device});
}

template <class T>
void adaptive_backward_kernel(const KernelCall& c) {
  const PlaneDims d = adaptive_dims(c.op, c.attrs, c.outputs[0].shape());
  average_windows_backward(c.runtime.thread_pool(), d, c.inputs[0].data<T>(), c.outputs[0].data<T>(),
                           AdaptiveWindows{d});
}

// ---- registration ----------------------------------------------------------

OpDef average_op(std::string name, std::vector<AttrSpec> attrs, InferFn infer, KernelFn f32, KernelFn f64,
                 BackwardFn backward) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = {{backward ? "input" : "grad_output"}};
  op.attrs = std::move(attrs);
  op.infer = infer;
  op.backward = backward;
  op.saves_outputs = false;
  op.set_kernel(DeviceType::cpu, DType::f32, f32);
  op.set_kernel(DeviceType::cpu, DType::f64, f64);
  return op;
}

}  // namespace

void register_avg_pool_ops(OpRegistry& r) {
  r.add(average_op("avg_pool2d", pool2d_attrs(PoolKind::average, false), avg_pool_infer, avg_pool_kernel<float>,
                   avg_pool_kernel<double>, avg_pool_backward));
  r.add(average_op("avg_pool2d_backward", pool2d_attrs(PoolKind::average, true), avg_pool_backward_infer,
                   avg_pool_backward_kernel<float>, avg_pool_backward_kernel<double>, nullptr));
  r.add(average_op("adaptive_avg_pool2d", {attr_required("output_size", AttrType::ints)}, adaptive_infer,
                   adaptive_kernel<float>, adaptive_kernel<double>, adaptive_backward));
  r.add(average_op("adaptive_avg_pool2d_backward",
                   {attr_required("output_size", AttrType::ints), attr_required("input_shape", AttrType::ints)},
                   adaptive_backward_infer, adaptive_backward_kernel<float>, adaptive_backward_kernel<double>,
                   nullptr));
}

}  // namespace kiln::nn
