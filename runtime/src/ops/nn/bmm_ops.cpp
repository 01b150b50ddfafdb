// bmm(batch1 [B, N, M], batch2 [B, M, P]) -> [B, N, P] and
// baddbmm(input, batch1, batch2, beta, alpha) = beta * input + alpha *
// bmm(batch1, batch2), input broadcast to [B, N, P], as torch.bmm and
// torch.baddbmm: matmul without broadcasting of the batch, whose kernels (on
// every device, strided views included) they run.
#include "kernel_of.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "kiln/ops/flop_count.hpp"
#include "kiln/ops/helpers.hpp"
#include "kiln/runtime.hpp"
#include "nn_ops.hpp"

namespace kiln {
namespace {

// Where batch1 and batch2 sit among the inputs of bmm (0) and baddbmm (1).
Shape check_batches(const InferCall& c, size_t at) {
  check_same_dtype(c);
  check_floating(c, at);
  const Shape& a = c.inputs[at].shape();
  const Shape& b = c.inputs[at + 1].shape();
  KILN_CHECK(a.rank() == 3, Status::shape_mismatch, "op '", c.op.name, "': batch1 must be a 3D tensor, got shape ",
             to_string(a));
  KILN_CHECK(b.rank() == 3, Status::shape_mismatch, "op '", c.op.name, "': batch2 must be a 3D tensor, got shape ",
             to_string(b));
  KILN_CHECK(b[0] == a[0] && b[1] == a[2], Status::shape_mismatch, "op '", c.op.name,
             "': expected size for first two dimensions of batch2 tensor to be: [", a[0], ", ", a[2], "] but got: [",
             b[0], ", ", b[1], "] (batch1 ", to_string(a), ", batch2 ", to_string(b), ")");
  return {a[0], a[1], b[2]};
}

Tensor transposed(Runtime& rt, const Tensor& t) { return rt.call1("transpose", {t}, {{"dim0", 1}, {"dim1", 2}}); }

void run_matmul_kernel(const KernelCall& c, const Tensor& batch1, const Tensor& batch2) {
  const OpDef& matmul = c.runtime.op("matmul");
  const Tensor operands[] = {batch1, batch2};
  nn::run_kernel_of(c, matmul, operands, c.outputs, matmul.default_attrs());
}

// ---- bmm ------------------------------------------------------------------

void bmm_infer(InferCall& c) { c.outputs.push_back({check_batches(c, 0), c.inputs[0].dtype(), c.device}); }

void bmm_kernel(const KernelCall& c) { run_matmul_kernel(c, c.inputs[0], c.inputs[1]); }

// grad_batch1 = grad @ batch2^T, grad_batch2 = batch1^T @ grad, each scaled
// by `scale` (baddbmm's alpha).
void product_grads(const BackwardCall& c, size_t at, double scale, std::vector<Tensor>& grads) {
  Runtime& rt = c.runtime;
  const OpDef& bmm = rt.op("bmm");
  const Tensor& grad = c.grad_outputs[0];
  const auto scaled = [&](Tensor t) { return scale == 1.0 ? t : rt.call1("mul_scalar", {t}, {{"value", scale}}); };
  if (c.needs_input_grad[at]) grads[at] = scaled(rt.call1(bmm, {grad, transposed(rt, c.inputs[at + 1])}));
  if (c.needs_input_grad[at + 1]) grads[at + 1] = scaled(rt.call1(bmm, {transposed(rt, c.inputs[at]), grad}));
}

std::vector<Tensor> bmm_backward(const BackwardCall& c) {
  std::vector<Tensor> grads(2);
  product_grads(c, 0, 1.0, grads);
  return grads;
}

// ---- baddbmm --------------------------------------------------------------

void baddbmm_infer(InferCall& c) {
  const Shape out = check_batches(c, 1);
  const Shape& in = c.inputs[0].shape();
  bool broadcasts = in.rank() <= 3;
  for (int d = 1; broadcasts && d <= in.rank(); ++d)
    broadcasts = in[in.rank() - d] == 1 || in[in.rank() - d] == out[3 - d];
  KILN_CHECK(broadcasts, Status::shape_mismatch, "op '", c.op.name, "': input of shape ", to_string(in),
             " does not broadcast to the product's shape ", to_string(out));
  c.outputs.push_back({out, c.inputs[0].dtype(), c.device});
}

// The product through matmul's kernel, then beta * input + alpha * product
// through the element-wise ops (as torch, a beta of 0 ignores the input, NaNs
// included).
void baddbmm_kernel(const KernelCall& c) {
  run_matmul_kernel(c, c.inputs[1], c.inputs[2]);
  Runtime& rt = c.runtime;
  const NoGradGuard no_grad(rt);
  const double beta = c.op.attr_real(c.attrs, "beta"), alpha = c.op.attr_real(c.attrs, "alpha");
  Tensor result = c.outputs[0];
  if (alpha != 1.0) result = rt.call1("mul_scalar", {result}, {{"value", alpha}});
  if (beta != 0.0) {
    const Tensor& input = c.inputs[0];
    result = rt.call1("add", {result, beta == 1.0 ? input : rt.call1("mul_scalar", {input}, {{"value", beta}})});
  }
  if (!result.same(c.outputs[0])) nn::run_kernel_of(c, rt.op("copy"), {&result, 1}, c.outputs, Attrs());
}

std::vector<Tensor> baddbmm_backward(const BackwardCall& c) {
  Runtime& rt = c.runtime;
  std::vector<Tensor> grads(3);
  if (c.needs_input_grad[0]) {
    const double beta = c.op.attr_real(c.attrs, "beta");
    grads[0] = sum_to(rt, rt.call1("mul_scalar", {c.grad_outputs[0]}, {{"value", beta}}), c.input_meta[0].shape);
  }
  product_grads(c, 1, c.op.attr_real(c.attrs, "alpha"), grads);
  return grads;
}

void set_matmul_kernels(OpDef& op, const OpRegistry& r, KernelFn fn) {
  op.accepts_strided = true;  // as matmul's kernels
  op.saves_outputs = false;
  op.precision = PrecisionCategory::lower;
  nn::mirror_kernels(op, r.get("matmul"), DeviceType::cpu, fn);
}

}  // namespace

void register_bmm_ops(OpRegistry& r) {
  {
    OpDef op;
    op.name = "bmm";
    op.inputs = {{"batch1"}, {"batch2"}};
    op.infer = bmm_infer;
    op.backward = bmm_backward;
    op.flops = [](const KernelCall& c) { return product_flops(double(c.outputs[0].numel()), double(c.inputs[0].shape().at(-1))); };
    set_matmul_kernels(op, r, bmm_kernel);
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "baddbmm";
    op.inputs = {{"input"}, {"batch1"}, {"batch2"}};
    op.attrs = {attr_real("beta", 1.0), attr_real("alpha", 1.0)};
    op.infer = baddbmm_infer;
    op.backward = baddbmm_backward;
    op.flops = [](const KernelCall& c) { return product_flops(double(c.outputs[0].numel()), double(c.inputs[1].shape().at(-1))); };
    set_matmul_kernels(op, r, baddbmm_kernel);
    r.add(std::move(op));
  }
}

}  // namespace kiln
