// scaled_dot_product_attention and its backward composed of the runtime's
// ops (matmul, softmax, masked_fill, element-wise), for the dtypes and
// devices without a fused kernel: f16 and bf16 on the CPU, every dtype on a
// GPU. They hold the [..., L, S] weights, which the fused kernel never does.
// The ops run with recording off (a kernel's work is not on the tape), and
// the results are copied into the outputs the dispatcher allocated through
// copy's kernel for the device.
#include <limits>

#include "attention_kernels.hpp"
#include "attention_shape.hpp"
#include "kernel_of.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "kiln/ops/helpers.hpp"
#include "kiln/runtime.hpp"

namespace kiln::nn {
namespace {

constexpr double kMinusInf = -std::numeric_limits<double>::infinity();

Tensor transposed(Runtime& rt, const Tensor& t) { return rt.call1("transpose", {t}, {{"dim0", -2}, {"dim1", -1}}); }

// True above the diagonal of an [L, S] grid: the keys causality leaves out.
Tensor future_positions(Runtime& rt, int64_t l, int64_t s, Device device) {
  Tensor future = rt.full({l, s}, 0.0, DType::boolean);
  bool* p = future.data<bool>();
  for (int64_t i = 0; i < l; ++i)
    for (int64_t j = i + 1; j < s; ++j) p[i * s + j] = true;
  if (device.is_cpu()) return future;
  return rt.call1("to", {future}, {{"device", to_string(device)}});
}

// softmax(query key^T * scale, with the mask and causality), [..., L, S].
Tensor attention_weights(Runtime& rt, const AttentionShape& s, const Tensor& query, const Tensor& key,
                         const Tensor& mask) {
  Tensor scores = rt.call1("mul_scalar", {rt.call1("matmul", {query, transposed(rt, key)})}, {{"value", s.scale}});
  if (s.mask == AttentionMask::add) scores = rt.call1("add", {scores, mask});
  if (s.mask == AttentionMask::keep)
    scores = rt.call1("masked_fill", {scores, rt.call1("logical_not", {mask})}, {{"value", kMinusInf}});
  if (s.causal)
    scores = rt.call1("masked_fill", {scores, future_positions(rt, s.l, s.s, query.device())}, {{"value", kMinusInf}});
  // A row whose scores are all -inf (every key masked) has weights 0, as
  // in PyTorch, where softmax alone would give 0 / 0.
  const Tensor minus_inf = rt.full({1}, kMinusInf, scores.dtype(), scores.device());
  const Tensor masked_row = rt.call1("all", {rt.call1("eq", {scores, minus_inf})},
                                     {{"dims", std::vector<int64_t>{-1}}, {"keepdim", true}});
  return rt.call1("masked_fill", {rt.call1("softmax", {scores}, {{"dim", -1}}), masked_row}, {{"value", 0.0}});
}

void copy_to_output(const KernelCall& c, const Tensor& result, size_t index) {
  const OpDef& copy = c.runtime.op("copy");
  run_kernel_of(c, copy, std::span<const Tensor>(&result, 1), c.outputs.subspan(index, 1), copy.default_attrs());
}

}  // namespace

// With dropout, the weights go through the dropout op, which draws from the
// runtime's random stream and gives the mask of those it kept (output 1).
void attention_composed_kernel(const KernelCall& c) {
  if (c.outputs[0].numel() == 0 && c.outputs[1].numel() == 0) return;
  Runtime& rt = c.runtime;
  NoGradGuard no_grad(rt);
  const Tensor mask = c.inputs.size() > 3 ? c.inputs[3] : Tensor();
  const AttentionShape s = attention_shape(c.op, c.attrs, c.inputs[0], c.inputs[1], c.inputs[2], mask);
  Tensor weights = attention_weights(rt, s, c.inputs[0], c.inputs[1], mask);
  if (s.dropout > 0.0) {
    const std::vector<Tensor> dropped = rt.call("dropout", {weights}, {{"p", s.dropout}, {"training", true}});
    weights = dropped[0];
    copy_to_output(c, dropped[1], 1);
  }
  if (c.outputs[0].numel() > 0) copy_to_output(c, rt.call1("matmul", {weights, c.inputs[2]}), 0);
}

// With P the weights and Z = drop(P) those the output read (P itself
// without dropout; P * kept / (1 - p) with it): dV = Z^T dO, dZ = dO V^T,
// dP = drop(dZ), dS = P (dP - rowsum(dP P)), dQ = scale dS K,
// dK = scale dS^T Q, and an added mask's gradient is dS summed over the
// dims it was broadcast along.
void attention_backward_composed_kernel(const KernelCall& c) {
  Runtime& rt = c.runtime;
  NoGradGuard no_grad(rt);
  const Tensor &dout = c.inputs[0], &query = c.inputs[1], &key = c.inputs[2], &value = c.inputs[3];
  const Tensor mask = c.inputs.size() > 5 ? c.inputs[5] : Tensor();
  const Tensor kept = c.inputs.size() > 6 ? c.inputs[6] : Tensor();
  const AttentionShape s = attention_shape(c.op, c.attrs, query, key, value, mask);
  // t * kept / (1 - p): the forward's dropout of t, and its own backward.
  const auto drop = [&](const Tensor& t) {
    if (s.dropout == 0.0) return t;
    return rt.call1("dropout_backward", {t, kept}, {{"scale", 1.0 / (1.0 - s.dropout)}});
  };
  const Tensor weights = attention_weights(rt, s, query, key, mask);
  const Tensor dweights = drop(rt.call1("matmul", {dout, transposed(rt, value)}));
  const Tensor row_dot =
      rt.call1("sum", {rt.call1("mul", {dweights, weights})}, {{"dims", std::vector<int64_t>{-1}}, {"keepdim", true}});
  const Tensor dscores = rt.call1("mul", {weights, rt.call1("sub", {dweights, row_dot})});
  const auto scaled = [&](const Tensor& t) { return rt.call1("mul_scalar", {t}, {{"value", s.scale}}); };
  if (c.outputs[0].numel() > 0) copy_to_output(c, scaled(rt.call1("matmul", {dscores, key})), 0);
  if (c.outputs[1].numel() > 0) copy_to_output(c, scaled(rt.call1("matmul", {transposed(rt, dscores), query})), 1);
  if (c.outputs[2].numel() > 0) copy_to_output(c, rt.call1("matmul", {transposed(rt, drop(weights)), dout}), 2);
  if (c.outputs.size() > 3 && c.outputs[3].numel() > 0) copy_to_output(c, sum_to(rt, dscores, mask.shape()), 3);
}

}  // namespace kiln::nn
