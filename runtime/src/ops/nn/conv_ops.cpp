// conv2d(input [N, C, H, W], weight [O, C/groups, KH, KW], bias [O] optional)
// with stride, padding, dilation and groups (depthwise: groups == C), and the
// two ops its backward is made of: conv2d_grad_input and conv2d_grad_weight.
#include <cstring>

#include "conv_grad_weight_few_channels.hpp"
#include "conv_kernels.hpp"
#include "conv_winograd.hpp"
#include "f16_through_f32.hpp"
#include "kiln/ops/flop_count.hpp"
#include "kiln/ops/helpers.hpp"
#include "nn_ops.hpp"

namespace kiln {
namespace {

using nn::Conv2dGeometry;

std::vector<int64_t> dims_of(const Shape& s) { return {s.begin(), s.end()}; }

void check_grad_output(const InferCall& c, const Conv2dGeometry& g) {
  const Shape& got = c.inputs[0].shape();
  KILN_CHECK(got == g.output_shape(), Status::shape_mismatch, "op '", c.op.name, "': grad_output is ",
             to_string(got), " but the convolution's output is ", to_string(g.output_shape()));
}

// True when there is nothing to compute: an empty result, or an empty
// grad_output (a batch of zero), whose gradient is all zeros.
bool done_if_empty(const Tensor& grad_output, Tensor& result) {
  if (result.numel() > 0 && grad_output.numel() == 0) std::memset(result.raw_data(), 0, result.nbytes());
  return result.numel() == 0 || grad_output.numel() == 0;
}

// ---- conv2d ----------------------------------------------------------------

void conv2d_infer(InferCall& c) {
  check_same_dtype(c);
  check_floating(c, 0);
  const Conv2dGeometry g = nn::conv2d_geometry(c.op, c.attrs, c.inputs[0].shape(), c.inputs[1].shape());
  if (c.inputs.size() > 2 && c.inputs[2].defined())
    KILN_CHECK(c.inputs[2].shape() == Shape{g.o}, Status::shape_mismatch, "op '", c.op.name, "': bias must be [",
               g.o, "] for weight ", to_string(c.inputs[1].shape()), ", got ", to_string(c.inputs[2].shape()));
  c.outputs.push_back({g.output_shape(), c.inputs[0].dtype(), c.device});
}

void conv2d_kernel(const KernelCall& c) {
  const Conv2dGeometry g = nn::conv2d_geometry(c.op, c.attrs, c.inputs[0].shape(), c.inputs[1].shape());
  const Tensor bias = c.inputs.size() > 2 ? c.inputs[2] : Tensor();
  if (c.outputs[0].numel() == 0) return;
  if (c.inputs[0].dtype() == DType::f64)
    nn::conv2d_forward_reference(c.runtime, g, c.inputs[0], c.inputs[1], bias, c.outputs[0]);
  else if (nn::winograd_takes(c.runtime, g, c.inputs[0].dtype()))
    nn::conv2d_forward_winograd(c.runtime, g, c.inputs[0], c.inputs[1], bias, c.outputs[0]);
  else
    nn::conv2d_forward_dnnl(c.runtime, c.op, g, c.inputs[0], c.inputs[1], bias, c.outputs[0]);
}

// The conv attributes of `c` followed by one shape: the attrs of a grad op.
Attrs grad_attrs(const Attrs& conv_attrs, const Shape& shape) {
  std::vector<AttrValue> values;
  for (size_t i = 0; i < conv_attrs.size(); ++i) values.push_back(conv_attrs[i]);
  values.emplace_back(dims_of(shape));
  return Attrs(std::move(values));
}

std::vector<Tensor> conv2d_backward(const BackwardCall& c) {
  Runtime& rt = c.runtime;
  const Tensor& x = c.inputs[0];
  const Tensor& w = c.inputs[1];
  const Tensor& grad = c.grad_outputs[0];
  std::vector<Tensor> grads(c.inputs.size());
  if (c.needs_input_grad[0]) grads[0] = rt.call1(rt.op("conv2d_grad_input"), {grad, w}, grad_attrs(c.attrs, x.shape()));
  if (c.needs_input_grad[1]) grads[1] = rt.call1(rt.op("conv2d_grad_weight"), {grad, x}, grad_attrs(c.attrs, w.shape()));
  if (grads.size() > 2 && c.needs_input_grad[2]) {
    const Tensor per_channel = sum_to(rt, grad, Shape{1, w.dim(0), 1, 1});
    const OpDef& reshape = rt.op("reshape");
    grads[2] = rt.call1(reshape, {per_channel}, reshape.make_attrs({{"shape", std::vector<int64_t>{w.dim(0)}}}));
  }
  return grads;
}

// ---- conv2d_grad_input(grad_output, weight), attr input_shape ----------------

void grad_input_infer(InferCall& c) {
  check_same_dtype(c);
  check_floating(c, 0);
  const Shape input = shape_from_attr(c.op, c.op.attr_ints(c.attrs, "input_shape"), "input_shape");
  check_grad_output(c, nn::conv2d_geometry(c.op, c.attrs, input, c.inputs[1].shape()));
  c.outputs.push_back({input, c.inputs[0].dtype(), c.device});
}

void grad_input_kernel(const KernelCall& c) {
  const Conv2dGeometry g = nn::conv2d_geometry(c.op, c.attrs, c.outputs[0].shape(), c.inputs[1].shape());
  if (done_if_empty(c.inputs[0], c.outputs[0])) return;
  if (c.inputs[0].dtype() == DType::f64)
    nn::conv2d_backward_input_reference(c.runtime, g, c.inputs[0], c.inputs[1], c.outputs[0]);
  else if (nn::winograd_takes(c.runtime, g, c.inputs[0].dtype()))
    nn::conv2d_backward_input_winograd(c.runtime, g, c.inputs[0], c.inputs[1], c.outputs[0]);
  else
    nn::conv2d_backward_input_dnnl(c.runtime, c.op, g, c.inputs[0], c.inputs[1], c.outputs[0]);
}

// ---- conv2d_grad_weight(grad_output, input), attr weight_shape ---------------

void grad_weight_infer(InferCall& c) {
  check_same_dtype(c);
  check_floating(c, 0);
  const Shape weight = shape_from_attr(c.op, c.op.attr_ints(c.attrs, "weight_shape"), "weight_shape");
  check_grad_output(c, nn::conv2d_geometry(c.op, c.attrs, c.inputs[1].shape(), weight));
  c.outputs.push_back({weight, c.inputs[0].dtype(), c.device});
}

void grad_weight_kernel(const KernelCall& c) {
  const Conv2dGeometry g = nn::conv2d_geometry(c.op, c.attrs, c.inputs[1].shape(), c.outputs[0].shape());
  if (done_if_empty(c.inputs[0], c.outputs[0])) return;
  if (c.inputs[0].dtype() == DType::f64)
    nn::conv2d_backward_weight_reference(c.runtime, g, c.inputs[0], c.inputs[1], c.outputs[0]);
  else if (nn::winograd_takes(c.runtime, g, c.inputs[0].dtype()))
    nn::conv2d_backward_weight_winograd(c.runtime, g, c.inputs[0], c.inputs[1], c.outputs[0]);
  else if (nn::few_channels_grad_weight_takes(g, c.inputs[0].dtype()))
    nn::conv2d_backward_weight_few_channels(c.runtime, g, c.inputs[0], c.inputs[1], c.outputs[0]);
  else
    nn::conv2d_backward_weight_dnnl(c.runtime, c.op, g, c.inputs[0], c.inputs[1], c.outputs[0]);
}

// The output (forward) or the output's gradient (both backward ops) is
// the output side.
double conv2d_flops(const KernelCall& c) { return convolution_flops(c.outputs[0], c.inputs[1]); }
double grad_input_flops(const KernelCall& c) { return convolution_flops(c.inputs[0], c.inputs[1]); }
double grad_weight_flops(const KernelCall& c) { return convolution_flops(c.inputs[0], c.outputs[0]); }

template <KernelFn kernel>
OpDef conv_op(std::string name, std::vector<InputSpec> inputs, InferFn infer) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = std::move(inputs);
  op.attrs = nn::conv2d_attrs();
  op.infer = infer;
  op.saves_outputs = false;
  op.set_kernel(DeviceType::cpu, {DType::f32, DType::f64, DType::bf16}, kernel);
  op.set_kernel(DeviceType::cpu, DType::f16, nn::f16_through_f32<kernel>);
  return op;
}

}  // namespace

void register_conv_ops(OpRegistry& r) {
  OpDef conv = conv_op<conv2d_kernel>("conv2d", {{"input"}, {"weight"}, {"bias", true}}, conv2d_infer);
  conv.backward = conv2d_backward;
  conv.flops = conv2d_flops;
  conv.precision = PrecisionCategory::lower;
  r.add(std::move(conv));
  OpDef grad_input = conv_op<grad_input_kernel>("conv2d_grad_input", {{"grad_output"}, {"weight"}}, grad_input_infer);
  grad_input.attrs.push_back(attr_required("input_shape", AttrType::ints));
  grad_input.flops = grad_input_flops;
  r.add(std::move(grad_input));
  OpDef grad_weight =
      conv_op<grad_weight_kernel>("conv2d_grad_weight", {{"grad_output"}, {"input"}}, grad_weight_infer);
  grad_weight.attrs.push_back(attr_required("weight_shape", AttrType::ints));
  grad_weight.flops = grad_weight_flops;
  r.add(std::move(grad_weight));
}

}  // namespace kiln
