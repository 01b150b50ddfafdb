// conv_transpose2d(input [N, C_in, H, W], weight [C_in, C_out/groups, KH, KW],
// bias [C_out] optional) with stride, padding, output_padding, groups and
// dilation, as torch.nn.functional.conv_transpose2d:
//   OH = (H - 1)*stride_h - 2*pad_h + dil_h*(KH - 1) + output_padding_h + 1
// A transposed convolution is the gradient of conv2d with respect to its
// input: conv2d of an [N, C_out, OH, OW] input with this weight
// ([O = C_in, C_out/groups, KH, KW]) gives an [N, C_in, H, W] output, and
// conv_transpose2d maps back along that. So the forward runs
// conv2d_grad_input's kernel for the device and dtype, the backward is
// conv2d (for the input) and conv2d_grad_weight with the roles of input and
// grad_output swapped (for the weight), and no kernel of its own exists.
//
// output_padding may reach max(stride, dilation) - 1, as in PyTorch. From
// stride on, conv2d of the output gives H + output_padding / stride rows
// rather than H (likewise columns): the input then stands padded with zeros
// up to that size, which adds nothing to the output, and the input's
// gradient is conv2d's result cut back to H.
#include <algorithm>

#include "conv_geometry.hpp"
#include "kernel_of.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "kiln/ops/flop_count.hpp"
#include "kiln/ops/helpers.hpp"
#include "nn_ops.hpp"

namespace kiln {
namespace {

using Dims = std::vector<int64_t>;

Dims dims_of(const Shape& s) { return {s.begin(), s.end()}; }

struct TransposedConv {
  Shape output;  // [N, C_out, OH, OW]: the input of the equivalent conv2d
  Dims stride, padding, dilation;
  int64_t groups;
  Dims input_pad;  // zero rows and columns after the input's: output_padding / stride
};

Dims pair_attr(const OpDef& op, const Attrs& attrs, const char* name, int64_t min) {
  const Dims& v = op.attr_ints(attrs, name);
  KILN_CHECK(v.size() == 2, Status::invalid_argument, "op '", op.name, "': ", name,
             " must have 2 values (height, width), got ", v.size());
  KILN_CHECK(v[0] >= min && v[1] >= min, Status::invalid_argument, "op '", op.name, "': ", name, " must be >= ", min,
             ", got [", v[0], ", ", v[1], "]");
  return v;
}

TransposedConv transposed_conv(const OpDef& op, const Attrs& attrs, const Shape& input, const Shape& weight) {
  KILN_CHECK(input.rank() == 4, Status::shape_mismatch, "op '", op.name,
             "': input must be [N, C_in, H, W] (rank 4), got ", to_string(input));
  KILN_CHECK(weight.rank() == 4, Status::shape_mismatch, "op '", op.name,
             "': weight must be [C_in, C_out/groups, KH, KW] (rank 4), got ", to_string(weight));
  TransposedConv t;
  t.stride = pair_attr(op, attrs, "stride", 1);
  t.padding = pair_attr(op, attrs, "padding", 0);
  t.dilation = pair_attr(op, attrs, "dilation", 1);
  const Dims output_padding = pair_attr(op, attrs, "output_padding", 0);
  t.groups = op.attr_int(attrs, "groups");
  KILN_CHECK(t.groups >= 1, Status::invalid_argument, "op '", op.name, "': groups must be >= 1, got ", t.groups);
  KILN_CHECK(weight[0] == input[1], Status::shape_mismatch, "op '", op.name, "': weight ", to_string(weight),
             " is for ", weight[0], " input channels but input ", to_string(input), " has ", input[1]);
  KILN_CHECK(input[1] % t.groups == 0, Status::shape_mismatch, "op '", op.name, "': input ", to_string(input),
             " has ", input[1], " channels, not divisible by groups = ", t.groups);
  t.output = {input[0], weight[1] * t.groups, 0, 0};
  t.input_pad = {0, 0};
  for (int i = 0; i < 2; ++i) {
    KILN_CHECK(output_padding[i] < std::max(t.stride[i], t.dilation[i]), Status::invalid_argument, "op '", op.name,
               "': output_padding must be smaller than stride or dilation, got output_padding [", output_padding[0],
               ", ", output_padding[1], "] with stride [", t.stride[0], ", ", t.stride[1], "] and dilation [",
               t.dilation[0], ", ", t.dilation[1], "]");
    t.input_pad[i] = output_padding[i] / t.stride[i];
    const int64_t size = (input[2 + i] - 1) * t.stride[i] - 2 * t.padding[i] + t.dilation[i] * (weight[2 + i] - 1) +
                         output_padding[i] + 1;
    KILN_CHECK(input[2 + i] >= 1 && weight[2 + i] >= 1 && size >= 1, Status::shape_mismatch, "op '", op.name,
               "': input ", to_string(input), " with weight ", to_string(weight), " and padding [", t.padding[0],
               ", ", t.padding[1], "] gives an output ", (i == 0 ? "height" : "width"), " of ", size,
               "; it must be at least 1");
    t.output[2 + i] = size;
  }
  return t;
}

// x [N, C, H, W] with rows[0] rows and rows[1] columns of zeros added after
// its own (removed, where negative).
Tensor pad_end(Runtime& rt, const Tensor& x, const Dims& rows) {
  if (rows[0] == 0 && rows[1] == 0) return x;
  return rt.call1("pad", {x}, {{"pad", Dims{0, rows[1], 0, rows[0]}}});
}

// The attributes of conv2d (or of one of its backward ops, with its shape
// attribute `extra`) for the convolution this one transposes.
Attrs conv2d_attrs_for(const TransposedConv& t, const OpDef& conv_op, std::pair<std::string_view, Dims> extra = {}) {
  std::vector<std::pair<std::string_view, AttrValue>> values{
      {"stride", t.stride}, {"padding", t.padding}, {"dilation", t.dilation}, {"groups", t.groups}};
  if (!extra.first.empty()) values.emplace_back(extra.first, std::move(extra.second));
  return conv_op.make_attrs(std::span<const std::pair<std::string_view, AttrValue>>(values));
}

void conv_transpose2d_infer(InferCall& c) {
  check_same_dtype(c);
  check_floating(c, 0);
  const TransposedConv t = transposed_conv(c.op, c.attrs, c.inputs[0].shape(), c.inputs[1].shape());
  if (c.inputs.size() > 2 && c.inputs[2].defined())
    KILN_CHECK(c.inputs[2].shape() == Shape{t.output[1]}, Status::shape_mismatch, "op '", c.op.name,
               "': bias must be [", t.output[1], "] for weight ", to_string(c.inputs[1].shape()), " and groups ",
               t.groups, ", got ", to_string(c.inputs[2].shape()));
  c.outputs.push_back({t.output, c.inputs[0].dtype(), c.device});
}

void conv_transpose2d_kernel(const KernelCall& c) {
  Tensor& y = c.outputs[0];
  if (y.numel() == 0) return;
  Runtime& rt = c.runtime;
  const TransposedConv t = transposed_conv(c.op, c.attrs, c.inputs[0].shape(), c.inputs[1].shape());
  const OpDef& grad_input = rt.op("conv2d_grad_input");
  NoGradGuard no_grad(rt);  // the padding is part of this kernel, not a step of the tape
  const Tensor padded[2] = {pad_end(rt, c.inputs[0], t.input_pad), c.inputs[1]};
  nn::run_kernel_of(c, grad_input, padded, c.outputs,
                    conv2d_attrs_for(t, grad_input, {"input_shape", dims_of(t.output)}));
  if (c.inputs.size() < 3 || !c.inputs[2].defined()) return;
  // y += bias[channel], in place through add's kernel: element i of the
  // result reads only element i of y, so the output may be y itself.
  const OpDef& add = rt.op("add");
  const Tensor operands[2] = {y, nn::dense_view(c.inputs[2], Shape{1, t.output[1], 1, 1})};
  nn::run_kernel_of(c, add, operands, c.outputs, add.default_attrs());
}

std::vector<Tensor> conv_transpose2d_backward(const BackwardCall& c) {
  Runtime& rt = c.runtime;
  const Tensor& x = c.inputs[0];
  const Tensor& w = c.inputs[1];
  const Tensor& grad = c.grad_outputs[0];
  const TransposedConv t = transposed_conv(c.op, c.attrs, x.shape(), w.shape());
  std::vector<Tensor> grads(c.inputs.size());
  if (c.needs_input_grad[0]) {
    const OpDef& conv2d = rt.op("conv2d");
    const Tensor full = rt.call1(conv2d, {grad, w}, conv2d_attrs_for(t, conv2d));
    grads[0] = pad_end(rt, full, {-t.input_pad[0], -t.input_pad[1]});
  }
  if (c.needs_input_grad[1]) {
    const OpDef& op = rt.op("conv2d_grad_weight");
    grads[1] = rt.call1(op, {pad_end(rt, x, t.input_pad), grad},
                        conv2d_attrs_for(t, op, {"weight_shape", dims_of(w.shape())}));
  }
  if (grads.size() > 2 && c.needs_input_grad[2]) {
    const int64_t channels = t.output[1];
    grads[2] = rt.call1("reshape", {sum_to(rt, grad, Shape{1, channels, 1, 1})}, {{"shape", Dims{channels}}});
  }
  return grads;
}

}  // namespace

void register_conv_transpose2d_op(OpRegistry& r) {
  OpDef op;
  op.name = "conv_transpose2d";
  op.inputs = {{"input"}, {"weight"}, {"bias", true}};
  op.attrs = {attr_ints("stride", {1, 1}), attr_ints("padding", {0, 0}), attr_ints("output_padding", {0, 0}),
              attr_int("groups", 1), attr_ints("dilation", {1, 1})};
  op.infer = conv_transpose2d_infer;
  op.backward = conv_transpose2d_backward;
  // Every input element meets the weights of its input channel.
  op.flops = [](const KernelCall& c) { return convolution_flops(c.inputs[0], c.inputs[1]); };
  op.saves_outputs = false;
  op.precision = PrecisionCategory::lower;
  for (DeviceType device : nn::built_devices()) op.set_kernel(device, nn::kFloatingDTypes, conv_transpose2d_kernel);
  r.add(std::move(op));
}

}  // namespace kiln
