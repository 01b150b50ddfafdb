// linear(input [..., in], weight [out, in], bias [out] optional,
// activation = "none") -> act(input @ weight^T + bias) [..., out]: one oneDNN
// matmul that reads the weight transposed through its strides and adds the
// bias and applies the activation in the same pass.
#include "f16_through_f32.hpp"
#include "kiln/ops/flop_count.hpp"
#include "kiln/ops/helpers.hpp"
#include "linear_activation.hpp"
#include "matmul_kernel.hpp"
#include "nn_ops.hpp"

namespace kiln {
namespace {

void linear_infer(InferCall& c) {
  nn::linear_activation(c.op, c.attrs);  // rejects an unknown name before any kernel runs
  check_same_dtype(c);
  check_floating(c, 0);
  const Shape& x = c.inputs[0].shape();
  KILN_CHECK(x.rank() >= 1, Status::shape_mismatch, "op '", c.op.name,
             "': input must have a feature dimension ([..., in]), got a scalar");
  check_rank(c, 1, 2, "[out, in]");
  const Shape& w = c.inputs[1].shape();
  KILN_CHECK(x[x.rank() - 1] == w[1], Status::shape_mismatch, "op '", c.op.name, "': input ", to_string(x),
             " has ", x[x.rank() - 1], " features but weight ", to_string(w), " expects ", w[1]);
  if (c.inputs.size() > 2 && c.inputs[2].defined()) {
    const Shape& b = c.inputs[2].shape();
    KILN_CHECK(b == Shape{w[0]}, Status::shape_mismatch, "op '", c.op.name, "': bias must be [", w[0],
               "] for weight ", to_string(w), ", got ", to_string(b));
  }
  Shape out = x;
  out[out.rank() - 1] = w[0];
  c.outputs.push_back({out, c.inputs[0].dtype(), c.device});
}

// Inputs arrive dense, so the product is input [rows, in] @ weight^T [in, out].
void linear_kernel(const KernelCall& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& w = c.inputs[1];
  const Tensor bias = c.inputs.size() > 2 ? c.inputs[2] : Tensor();
  const int64_t in = w.dim(1), out = w.dim(0);
  const int64_t rows = in > 0 ? x.numel() / in : c.outputs[0].numel() / std::max<int64_t>(out, 1);
  const Tensor x2 = x.view_as({rows, in}, {in, 1}, x.offset());
  const Tensor w_t = w.view_as({in, out}, {1, in}, w.offset());
  Tensor out2 = c.outputs[0].view_as({rows, out}, {out, 1}, c.outputs[0].offset());
  nn::batched_matmul(c.runtime, c.op, x2, w_t, bias, out2, nn::linear_activation(c.op, c.attrs));
}

Tensor reshaped(Runtime& rt, const Tensor& t, std::vector<int64_t> shape) {
  const OpDef& op = rt.op("reshape");
  return rt.call1(op, {t}, op.make_attrs({{"shape", std::move(shape)}}));
}

// The gradient with respect to the pre-activation x @ w^T + b. relu reads
// its mask from the saved output (positive exactly where the
// pre-activation is). GELU is not invertible, so its backward needs the
// pre-activation itself: it is recomputed here, one more product the size
// of the forward's, rather than kept from the forward as a second output
// (cuBLASLt's GELU_AUX epilogue could write it), which would hold a tensor
// the size of the output until the backward and give every caller of
// linear an output it did not ask for.
Tensor pre_activation_grad(const BackwardCall& c) {
  const nn::LinearActivation activation = nn::linear_activation(c.op, c.attrs);
  if (activation == nn::LinearActivation::none) return c.grad_outputs[0];
  Runtime& rt = c.runtime;
  const Tensor bias = c.inputs.size() > 2 ? c.inputs[2] : Tensor();
  const Tensor at = activation == nn::LinearActivation::relu
                        ? c.outputs[0]
                        : rt.call1(c.op, {c.inputs[0], c.inputs[1], bias},
                                   c.op.make_attrs({{"activation", std::string("none")}}));
  const nn::ActivationCall backward = nn::activation_call(rt, activation, true);
  return rt.call1(backward.op, {c.grad_outputs[0], at}, backward.attrs);
}

// With rows = the input's leading dims flattened and g = the pre-activation's
// grad [rows, out]: grad_input = g @ weight, grad_weight = g^T @ input,
// grad_bias = sum of g's rows.
std::vector<Tensor> linear_backward(const BackwardCall& c) {
  Runtime& rt = c.runtime;
  const Tensor& x = c.inputs[0];
  const Tensor& w = c.inputs[1];
  const int64_t in = w.dim(1), out = w.dim(0);
  const Tensor g = reshaped(rt, pre_activation_grad(c), {-1, out});
  const OpDef& matmul = rt.op("matmul");
  std::vector<Tensor> grads(c.inputs.size());
  if (c.needs_input_grad[0]) {
    const Shape& s = x.shape();
    grads[0] = reshaped(rt, rt.call1(matmul, {g, w}), std::vector<int64_t>(s.begin(), s.end()));
  }
  if (c.needs_input_grad[1]) {
    const OpDef& transpose = rt.op("transpose");
    const Tensor g_t = rt.call1(transpose, {g}, transpose.make_attrs({{"dim0", 0}, {"dim1", 1}}));
    grads[1] = rt.call1(matmul, {g_t, reshaped(rt, x, {-1, in})});
  }
  if (grads.size() > 2 && c.needs_input_grad[2]) grads[2] = sum_to(rt, g, Shape{out});
  return grads;
}

// Only relu's backward reads the output (its mask).
bool saves_output(const Attrs& attrs) { return attrs.string(0) == "relu"; }

// Every output element is a dot product over the weight's in_features.
double linear_flops(const KernelCall& c) {
  return product_flops(double(c.outputs[0].numel()), double(c.inputs[1].shape().at(-1)));
}

}  // namespace

void register_linear_op(OpRegistry& r) {
  OpDef op;
  op.name = "linear";
  op.inputs = {{"input"}, {"weight"}, {"bias", true}};
  op.attrs = {attr_string("activation", "none")};
  op.infer = linear_infer;
  op.backward = linear_backward;
  op.flops = linear_flops;
  op.saves_outputs_for = saves_output;
  op.precision = PrecisionCategory::lower;
  op.set_kernel(DeviceType::cpu, {DType::f32, DType::f64, DType::bf16}, linear_kernel);
  op.set_kernel(DeviceType::cpu, DType::f16, nn::f16_through_f32<linear_kernel>);
  r.add(std::move(op));
}

}  // namespace kiln
