// conv1d(input [N, C, L], weight [O, C/groups, K], bias [O] optional) with
// stride, padding and dilation (one value each) and groups, as
// torch.nn.functional.conv1d. It is conv2d on views of height 1
// ([N, C, 1, L], [O, C/groups, 1, K]): the forward runs conv2d's kernel for
// the device and dtype on those views, the backward conv2d's backward ops,
// so conv1d runs wherever conv2d does with no kernels of its own.
#include "conv_geometry.hpp"
#include "kernel_of.hpp"
#include "kiln/ops/flop_count.hpp"
#include "kiln/ops/helpers.hpp"
#include "nn_ops.hpp"

namespace kiln {
namespace {

using Dims = std::vector<int64_t>;

Dims dims_of(const Shape& s) { return {s.begin(), s.end()}; }

// A [.., L]-shaped tensor's shape with a height of 1 before its last dim.
Shape with_unit_height(const Shape& s) { return {s[0], s[1], 1, s[2]}; }

int64_t single_value(const OpDef& op, const Attrs& attrs, const char* name, int64_t min) {
  const Dims& v = op.attr_ints(attrs, name);
  KILN_CHECK(v.size() == 1, Status::invalid_argument, "op '", op.name, "': ", name,
             " must have 1 value (length), got ", v.size());
  KILN_CHECK(v[0] >= min, Status::invalid_argument, "op '", op.name, "': ", name, " must be >= ", min, ", got ",
             v[0]);
  return v[0];
}

// conv2d's attributes (and `extra`, a shape attribute of its backward ops)
// for the height-1 convolution equal to conv1d with `attrs`.
Attrs conv2d_attrs_for(const OpDef& conv1d, const Attrs& attrs, const OpDef& conv2d_op,
                       std::pair<std::string_view, Dims> extra = {}) {
  const int64_t stride = single_value(conv1d, attrs, "stride", 1);
  const int64_t padding = single_value(conv1d, attrs, "padding", 0);
  const int64_t dilation = single_value(conv1d, attrs, "dilation", 1);
  std::vector<std::pair<std::string_view, AttrValue>> values{{"stride", Dims{1, stride}},
                                                             {"padding", Dims{0, padding}},
                                                             {"dilation", Dims{1, dilation}},
                                                             {"groups", conv1d.attr_int(attrs, "groups")}};
  if (!extra.first.empty()) values.emplace_back(extra.first, std::move(extra.second));
  return conv2d_op.make_attrs(std::span<const std::pair<std::string_view, AttrValue>>(values));
}

void conv1d_infer(InferCall& c) {
  check_same_dtype(c);
  check_floating(c, 0);
  const Shape& input = c.inputs[0].shape();
  const Shape& weight = c.inputs[1].shape();
  KILN_CHECK(input.rank() == 3, Status::shape_mismatch, "op '", c.op.name, "': input must be [N, C, L] (rank 3), got ",
             to_string(input));
  KILN_CHECK(weight.rank() == 3, Status::shape_mismatch, "op '", c.op.name,
             "': weight must be [O, C/groups, K] (rank 3), got ", to_string(weight));
  // conv1d's schema has conv2d's attribute names, so its own schema builds
  // the 2-D attributes here, and the geometry's errors name conv1d.
  const Attrs attrs2d = conv2d_attrs_for(c.op, c.attrs, c.op);
  const nn::Conv2dGeometry g =
      nn::conv2d_geometry(c.op, attrs2d, with_unit_height(input), with_unit_height(weight));
  if (c.inputs.size() > 2 && c.inputs[2].defined())
    KILN_CHECK(c.inputs[2].shape() == Shape{g.o}, Status::shape_mismatch, "op '", c.op.name, "': bias must be [",
               g.o, "] for weight ", to_string(weight), ", got ", to_string(c.inputs[2].shape()));
  c.outputs.push_back({Shape{g.n, g.o, g.ow}, c.inputs[0].dtype(), c.device});
}

void conv1d_kernel(const KernelCall& c) {
  if (c.outputs[0].numel() == 0) return;
  const OpDef& conv2d = c.runtime.op("conv2d");
  std::vector<Tensor> inputs{nn::dense_view(c.inputs[0], with_unit_height(c.inputs[0].shape())),
                             nn::dense_view(c.inputs[1], with_unit_height(c.inputs[1].shape()))};
  if (c.inputs.size() > 2 && c.inputs[2].defined()) inputs.push_back(c.inputs[2]);
  Tensor output = nn::dense_view(c.outputs[0], with_unit_height(c.outputs[0].shape()));
  nn::run_kernel_of(c, conv2d, inputs, std::span<Tensor>(&output, 1), conv2d_attrs_for(c.op, c.attrs, conv2d));
}

Tensor reshaped(Runtime& rt, const Tensor& t, const Shape& shape) {
  return rt.call1("reshape", {t}, {{"shape", dims_of(shape)}});
}

std::vector<Tensor> conv1d_backward(const BackwardCall& c) {
  Runtime& rt = c.runtime;
  const Tensor& x = c.inputs[0];
  const Tensor& w = c.inputs[1];
  const Tensor grad = reshaped(rt, c.grad_outputs[0], with_unit_height(c.grad_outputs[0].shape()));
  std::vector<Tensor> grads(c.inputs.size());
  if (c.needs_input_grad[0]) {
    const OpDef& op = rt.op("conv2d_grad_input");
    const Attrs attrs = conv2d_attrs_for(c.op, c.attrs, op, {"input_shape", dims_of(with_unit_height(x.shape()))});
    grads[0] = reshaped(rt, rt.call1(op, {grad, reshaped(rt, w, with_unit_height(w.shape()))}, attrs), x.shape());
  }
  if (c.needs_input_grad[1]) {
    const OpDef& op = rt.op("conv2d_grad_weight");
    const Attrs attrs = conv2d_attrs_for(c.op, c.attrs, op, {"weight_shape", dims_of(with_unit_height(w.shape()))});
    grads[1] = reshaped(rt, rt.call1(op, {grad, reshaped(rt, x, with_unit_height(x.shape()))}, attrs), w.shape());
  }
  if (grads.size() > 2 && c.needs_input_grad[2])
    grads[2] = reshaped(rt, sum_to(rt, c.grad_outputs[0], Shape{1, w.dim(0), 1}), Shape{w.dim(0)});
  return grads;
}

}  // namespace

void register_conv1d_op(OpRegistry& r) {
  OpDef op;
  op.name = "conv1d";
  op.inputs = {{"input"}, {"weight"}, {"bias", true}};
  op.attrs = {attr_ints("stride", {1}), attr_ints("padding", {0}), attr_ints("dilation", {1}), attr_int("groups", 1)};
  op.infer = conv1d_infer;
  op.backward = conv1d_backward;
  op.flops = [](const KernelCall& c) { return convolution_flops(c.outputs[0], c.inputs[1]); };
  op.saves_outputs = false;
  op.precision = PrecisionCategory::lower;
  for (DeviceType device : nn::built_devices()) op.set_kernel(device, nn::kFloatingDTypes, conv1d_kernel);
  r.add(std::move(op));
}

}  // namespace kiln
