// matmul(a [..., M, K], b [..., K, N]) -> [..., M, N], batch dims broadcast.
// Transposed operands (strided views) go to oneDNN without a copy, which is
// what the backward relies on: its grad @ b^T and a^T @ grad are views.
#include "kiln/ops/flop_count.hpp"
#include "kiln/ops/helpers.hpp"
#include "f16_through_f32.hpp"
#include "matmul_kernel.hpp"
#include "nn_ops.hpp"

namespace kiln {
namespace {

Shape batch_dims(const Shape& s) {
  Shape b = s;
  b.resize(s.rank() - 2);
  return b;
}

void matmul_infer(InferCall& c) {
  check_same_dtype(c);
  check_floating(c, 0);
  const Shape& a = c.inputs[0].shape();
  const Shape& b = c.inputs[1].shape();
  KILN_CHECK(a.rank() >= 2 && b.rank() >= 2, Status::shape_mismatch, "op '", c.op.name,
             "': expected a [..., M, K] and b [..., K, N] (rank 2 or more), got a ", to_string(a), " and b ",
             to_string(b));
  KILN_CHECK(a[a.rank() - 1] == b[b.rank() - 2], Status::shape_mismatch, "op '", c.op.name, "': a ", to_string(a),
             " and b ", to_string(b), " do not chain: a's last dimension must equal b's second to last");
  Shape out = broadcast_shapes(batch_dims(a), batch_dims(b), c.op.name.c_str());
  out.push_back(a[a.rank() - 2]);
  out.push_back(b[b.rank() - 1]);
  c.outputs.push_back({out, c.inputs[0].dtype(), c.device});
}

void matmul_kernel(const KernelCall& c) {
  nn::batched_matmul(c.runtime, c.op, c.inputs[0], c.inputs[1], Tensor(), c.outputs[0]);
}

Tensor transposed(Runtime& rt, const Tensor& t) {
  const OpDef& op = rt.op("transpose");
  return rt.call1(op, {t}, op.make_attrs({{"dim0", -2}, {"dim1", -1}}));
}

// grad_a = grad @ b^T and grad_b = a^T @ grad, each summed over the batch
// dims its operand was broadcast along.
std::vector<Tensor> matmul_backward(const BackwardCall& c) {
  Runtime& rt = c.runtime;
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  const Tensor& grad = c.grad_outputs[0];
  std::vector<Tensor> grads(2);
  if (c.needs_input_grad[0]) grads[0] = sum_to(rt, rt.call1(c.op, {grad, transposed(rt, b)}, c.attrs), a.shape());
  if (c.needs_input_grad[1]) grads[1] = sum_to(rt, rt.call1(c.op, {transposed(rt, a), grad}, c.attrs), b.shape());
  return grads;
}

// Every output element is a dot product over a's last dimension.
double matmul_flops(const KernelCall& c) {
  return product_flops(double(c.outputs[0].numel()), double(c.inputs[0].shape().at(-1)));
}

}  // namespace

void register_matmul_ops(OpRegistry& r) {
  OpDef op;
  op.name = "matmul";
  op.inputs = {{"a"}, {"b"}};
  op.infer = matmul_infer;
  op.backward = matmul_backward;
  op.flops = matmul_flops;
  op.accepts_strided = true;
  op.saves_outputs = false;
  op.precision = PrecisionCategory::lower;
  op.set_kernel(DeviceType::cpu, {DType::f32, DType::f64, DType::bf16}, matmul_kernel);
  op.set_kernel(DeviceType::cpu, DType::f16, nn::f16_through_f32<matmul_kernel>);
  r.add(std::move(op));
  register_linear_op(r);
}

}  // namespace kiln
