// lstm_recurrence(x_proj, h0, c0, weight_hh, bias_hh?; reverse): the
// recurrent part of one LSTM layer and direction over a whole sequence, in
// one call. x_proj [T, N, 4H] is the layer's input already through its input
// weights (x W_ih^T + b_ih, one product for every step, as nn.LSTM computes
// it), h0 and c0 are [N, H], weight_hh [4H, H], bias_hh [4H]; the gates are
// stacked i, f, g, o as in PyTorch. Each step t (from the last to the first
// with reverse) computes
//   i, f, g, o = act(x_proj[t] + h W_hh^T + b_hh),  c = f c + i g,  h = o tanh(c)
// and the outputs are h at every step [T, N, H], then the final h and c.
// The activated gates and the cell states of every step are two more
// outputs, for the backward alone.
//
// Its backward op, lstm_recurrence_backward(grad_output, grad_h_n, grad_c_n,
// h0, c0, weight_hh, output, gates, cells; reverse), gives the gradients of
// x_proj, h0, c0, weight_hh and bias_hh.
#include "kiln/ops/flop_count.hpp"
#include "kiln/ops/helpers.hpp"
#include "lstm_kernels.hpp"
#include "nn_ops.hpp"

namespace kiln {
namespace {

void check_shape(const InferCall& c, size_t i, const Shape& expected, const char* what) {
  KILN_CHECK(c.inputs[i].shape() == expected, Status::shape_mismatch, "op '", c.op.name, "': ", c.op.inputs[i].name,
             " must be ", what, " = ", to_string(expected), ", got ", to_string(c.inputs[i].shape()));
}

// Checks the inputs common to both ops, given their indices (c0 follows
// h0): a [T, N, 4H] sequence (x_proj, or the backward's gates), h0 and c0,
// weight_hh. Gives T, N and H as the shape [T, N, H].
Shape sequence_shape(const InferCall& c, size_t x_proj, size_t h0, size_t weight_hh) {
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (c.inputs[i].defined()) check_floating(c, i);
  check_same_dtype(c);
  check_rank(c, weight_hh, 2, "[4H, H]");
  const int64_t hidden = c.inputs[weight_hh].dim(1);
  KILN_CHECK(c.inputs[weight_hh].dim(0) == 4 * hidden && hidden > 0, Status::shape_mismatch, "op '", c.op.name,
             "': weight_hh must be [4H, H] (the gates i, f, g, o stacked), got ",
             to_string(c.inputs[weight_hh].shape()));
  check_rank(c, x_proj, 3, "[T, N, 4H]");
  const Tensor& x = c.inputs[x_proj];
  KILN_CHECK(x.dim(0) > 0, Status::shape_mismatch, "op '", c.op.name, "': ", c.op.inputs[x_proj].name,
             " holds no step; the sequence must be at least 1 long, got ", to_string(x.shape()));
  check_shape(c, x_proj, {x.dim(0), x.dim(1), 4 * hidden}, "[T, N, 4H]");
  const Shape state{x.dim(1), hidden};
  check_shape(c, h0, state, "[N, H]");
  check_shape(c, h0 + 1, state, "[N, H]");
  return {x.dim(0), x.dim(1), hidden};
}

void forward_infer(InferCall& c) {
  const Shape s = sequence_shape(c, 0, 1, 3);
  const int64_t gates = 4 * s[2];
  if (c.inputs.size() > 4 && c.inputs[4].defined()) check_shape(c, 4, {gates}, "[4H]");
  const DType dtype = c.inputs[0].dtype();
  c.outputs.push_back({s, dtype, c.device});                   // output
  c.outputs.push_back({{s[1], s[2]}, dtype, c.device});        // h_n
  c.outputs.push_back({{s[1], s[2]}, dtype, c.device});        // c_n
  c.outputs.push_back({{s[0], s[1], gates}, dtype, c.device});  // gates
  c.outputs.push_back({s, dtype, c.device});                   // cells
}

void backward_infer(InferCall& c) {
  const Shape s = sequence_shape(c, 7, 3, 5);
  check_shape(c, 0, s, "[T, N, H]");
  check_shape(c, 1, {s[1], s[2]}, "[N, H]");
  check_shape(c, 2, {s[1], s[2]}, "[N, H]");
  check_shape(c, 6, s, "[T, N, H]");
  check_shape(c, 8, s, "[T, N, H]");
  const DType dtype = c.inputs[0].dtype();
  c.outputs.push_back({c.inputs[7].shape(), dtype, c.device});  // x_proj
  c.outputs.push_back({{s[1], s[2]}, dtype, c.device});         // h0
  c.outputs.push_back({{s[1], s[2]}, dtype, c.device});         // c0
  c.outputs.push_back({c.inputs[5].shape(), dtype, c.device});  // weight_hh
  c.outputs.push_back({{4 * s[2]}, dtype, c.device});           // bias_hh
}

std::vector<Tensor> backward(const BackwardCall& c) {
  Runtime& rt = c.runtime;
  const std::vector<Tensor> grads =
      rt.call(rt.op("lstm_recurrence_backward"),
              std::vector<Tensor>{c.grad_outputs[0], c.grad_outputs[1], c.grad_outputs[2], c.inputs[1], c.inputs[2],
                                  c.inputs[3], c.outputs[0], c.outputs[3], c.outputs[4]},
              c.attrs);
  std::vector<Tensor> result(c.inputs.size());
  for (size_t i = 0; i < result.size(); ++i)
    if (c.needs_input_grad[i]) result[i] = grads[i];
  return result;
}

// The products h W_hh^T of every step: T N 4H H multiply-adds.
double recurrence_flops(const Tensor& output) {
  return product_flops(4.0 * double(output.numel()), double(output.dim(2)));
}

}  // namespace

void register_lstm_ops(OpRegistry& r) {
  OpDef op;
  op.name = "lstm_recurrence";
  op.inputs = {{"x_proj"}, {"h0"}, {"c0"}, {"weight_hh"}, {"bias_hh", true}};
  op.attrs = {attr_bool("reverse", false)};
  op.infer = forward_infer;
  op.backward = backward;
  op.flops = [](const KernelCall& c) { return recurrence_flops(c.outputs[0]); };
  op.precision = PrecisionCategory::f32;
  op.backward_only_outputs = 2;  // gates, cells
  op.set_kernel(DeviceType::cpu, {DType::f32, DType::f64}, nn::lstm_recurrence_kernel);
  r.add(std::move(op));

  OpDef grad;
  grad.name = "lstm_recurrence_backward";
  grad.inputs = {{"grad_output"}, {"grad_h_n"},  {"grad_c_n"}, {"h0"},   {"c0"},
                 {"weight_hh"},   {"output"},    {"gates"},    {"cells"}};
  grad.attrs = {attr_bool("reverse", false)};
  grad.infer = backward_infer;
  // Two products of the forward's size: the gradients of h and of W_hh.
  grad.flops = [](const KernelCall& c) { return 2.0 * recurrence_flops(c.inputs[0]); };
  grad.set_kernel(DeviceType::cpu, {DType::f32, DType::f64}, nn::lstm_recurrence_backward_kernel);
  r.add(std::move(grad));
}

}  // namespace kiln
