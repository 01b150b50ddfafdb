// scaled_dot_product_attention(query, key, value, attn_mask?; dropout_p,
// is_causal, scale) as torch.nn.functional.scaled_dot_product_attention
// (shapes and mask rules in attention_shape.hpp; scale NaN, the default,
// means 1/sqrt(E)), and its backward op, which gives the gradients of
// query, key and value, and with attn_mask_grad that of a floating
// attn_mask: the gradient of the scores summed to the mask's shape, as
// PyTorch differentiates an additive mask. A bool mask gets none.
//
// dropout_p > 0 drops attention weights as the dropout op drops elements,
// from the runtime's random stream (so a seed, or a checkpoint's recompute
// that restores the stream, gives the same weights again). Which weights
// were kept is a second output, u8 [..., L, S] (empty without dropout),
// that only the backward reads: the caller receives the attention alone.
#include <vector>

#include "../dense_inputs.hpp"
#include "attention_kernels.hpp"
#include "attention_shape.hpp"
#include "kernel_of.hpp"
#include "kiln/ops/flop_count.hpp"
#include "kiln/ops/helpers.hpp"
#include "nn_ops.hpp"

namespace kiln {
namespace {

Tensor optional_input(std::span<const Tensor> inputs, size_t i) { return inputs.size() > i ? inputs[i] : Tensor(); }

// Inputs `first` to `last` are floating and of one dtype.
void check_floating_inputs(const InferCall& c, size_t first, size_t last) {
  const DType dtype = c.inputs[first].dtype();
  for (size_t i = first; i <= last; ++i) {
    check_floating(c, i);
    KILN_CHECK(c.inputs[i].dtype() == dtype, Status::dtype_mismatch, "op '", c.op.name, "': ", c.op.inputs[i].name,
               " is ", dtype_name(c.inputs[i].dtype()), " but ", c.op.inputs[first].name, " is ", dtype_name(dtype));
  }
}

void attention_infer(InferCall& c) {
  check_floating_inputs(c, 0, 2);
  const nn::AttentionShape s =
      nn::attention_shape(c.op, c.attrs, c.inputs[0], c.inputs[1], c.inputs[2], optional_input(c.inputs, 3));
  c.outputs.push_back({s.output_shape(c.inputs[0].shape()), c.inputs[0].dtype(), c.device});
  c.outputs.push_back({s.dropout > 0.0 ? s.scores_shape(c.inputs[0].shape()) : Shape{0}, DType::u8, c.device});
}

// The backward op's attributes: the forward's, then attn_mask_grad.
Attrs backward_attrs(const Attrs& forward, bool mask_grad) {
  std::vector<AttrValue> values;
  for (size_t i = 0; i < forward.size(); ++i) values.push_back(forward[i]);
  values.emplace_back(mask_grad);
  return Attrs(std::move(values));
}

// The forward's record of the weights dropout kept, or none without dropout.
Tensor kept_weights(const BackwardCall& c) {
  return c.op.attr_real(c.attrs, "dropout_p") > 0.0 ? c.outputs[1] : Tensor();
}

std::vector<Tensor> attention_backward(const BackwardCall& c) {
  Runtime& rt = c.runtime;
  // Only a floating mask can require grad; most masks are constants, and
  // then the fused kernel needs no [L, S] gradient of the scores.
  const bool mask_grad = c.needs_input_grad.size() > 3 && c.needs_input_grad[3];
  const std::vector<Tensor> grads =
      rt.call(rt.op("scaled_dot_product_attention_backward"),
              std::vector<Tensor>{c.grad_outputs[0], c.inputs[0], c.inputs[1], c.inputs[2], c.outputs[0],
                                  optional_input(c.inputs, 3), kept_weights(c)},
              backward_attrs(c.attrs, mask_grad));
  std::vector<Tensor> result(c.inputs.size());
  for (size_t i = 0; i < grads.size(); ++i)
    if (c.needs_input_grad[i]) result[i] = grads[i];
  return result;
}

// (grad_output, query, key, value, output, attn_mask?, dropout_mask?) ->
// grads of query, key, value, and of attn_mask with attn_mask_grad;
// dropout_mask is given exactly when dropout_p > 0.
void attention_backward_infer(InferCall& c) {
  check_floating_inputs(c, 0, 4);
  const nn::AttentionShape s =
      nn::attention_shape(c.op, c.attrs, c.inputs[1], c.inputs[2], c.inputs[3], optional_input(c.inputs, 5));
  const Shape out = s.output_shape(c.inputs[1].shape());
  for (size_t i : {0, 4})
    KILN_CHECK(c.inputs[i].shape() == out, Status::shape_mismatch, "op '", c.op.name, "': ", c.op.inputs[i].name,
               " is ", to_string(c.inputs[i].shape()), " but the attention's output is ", to_string(out));
  const Tensor kept = optional_input(c.inputs, 6);
  const Shape scores = s.scores_shape(c.inputs[1].shape());
  KILN_CHECK(kept.defined() == (s.dropout > 0.0), Status::invalid_argument, "op '", c.op.name,
             "': dropout_mask must be given when dropout_p > 0 and only then; dropout_p is ", s.dropout);
  KILN_CHECK(!kept.defined() || (kept.dtype() == DType::u8 && kept.shape() == scores), Status::shape_mismatch,
             "op '", c.op.name, "': dropout_mask must be u8 ", to_string(scores), " like the scores, got ",
             kept.defined() ? dtype_name(kept.dtype()) : "", " ", kept.defined() ? to_string(kept.shape()) : "");
  for (size_t i : {1, 2, 3}) c.outputs.push_back({c.inputs[i].shape(), c.inputs[i].dtype(), c.device});
  if (!c.op.attr_bool(c.attrs, "attn_mask_grad")) return;
  KILN_CHECK(s.mask == nn::AttentionMask::add, Status::invalid_argument, "op '", c.op.name,
             "': attn_mask_grad asks for the gradient of a floating attn_mask, and none was given");
  c.outputs.push_back({c.inputs[5].shape(), c.inputs[5].dtype(), c.device});
}

// The op takes strided inputs for the f32 kernel, which reads rows where
// they are (the heads of a [N, L, H, D] tensor permuted to [N, H, L, D],
// say); the others get them dense.
template <KernelFn kernel>
void on_dense_inputs(const KernelCall& c) {
  nn::with_dense_inputs(c, kernel);
}

template <KernelFn fused, KernelFn composed>
void set_kernels(OpDef& op) {
  op.accepts_strided = true;
  op.set_kernel(DeviceType::cpu, {DType::f32, DType::f64}, fused);
  op.set_kernel(DeviceType::cpu, {DType::f16, DType::bf16}, on_dense_inputs<composed>);
  for (DeviceType device : nn::built_devices())
    if (device != DeviceType::cpu) op.set_kernel(device, nn::kFloatingDTypes, on_dense_inputs<composed>);
}

// The two products, scores = q k^T (L x S x E) and weights @ v (L x S x Ev),
// for every leading index.
double attention_flops(const Tensor& query, const Tensor& key, const Tensor& value) {
  const double rows = double(query.numel()) / double(query.shape().at(-1));  // leading dims x L
  const double keys = double(key.shape().at(-2));
  return product_flops(rows * keys, double(query.shape().at(-1))) + product_flops(rows * keys, double(value.shape().at(-1)));
}

}  // namespace

namespace nn {

void with_dense_inputs(const KernelCall& c, KernelFn kernel) {
  const std::vector<Tensor> dense = dense_copies(c.runtime, c.inputs);
  if (dense.empty()) return kernel(c);
  kernel(KernelCall{c.runtime, c.op, dense, c.outputs, c.attrs});
}

}  // namespace nn

void register_attention_ops(OpRegistry& r) {
  OpDef op;
  op.name = "scaled_dot_product_attention";
  op.inputs = {{"query"}, {"key"}, {"value"}, {"attn_mask", true}};
  op.attrs = nn::attention_attrs();
  op.infer = attention_infer;
  op.backward = attention_backward;
  op.flops = [](const KernelCall& c) { return attention_flops(c.inputs[0], c.inputs[1], c.inputs[2]); };
  op.precision = PrecisionCategory::lower;
  op.backward_only_outputs = 1;  // the dropout mask
  set_kernels<nn::attention_fused_kernel, nn::attention_composed_kernel>(op);
  r.add(std::move(op));

  OpDef grad;
  grad.name = "scaled_dot_product_attention_backward";
  grad.inputs = {{"grad_output"}, {"query"},          {"key"},
                 {"value"},       {"output"},         {"attn_mask", true},
                 {"dropout_mask", true}};
  grad.attrs = nn::attention_attrs();
  grad.attrs.push_back(attr_bool("attn_mask_grad", false));
  grad.infer = attention_backward_infer;
  // Four products of the forward's sizes: the gradients of the weights, v, q and k.
  grad.flops = [](const KernelCall& c) { return 2.0 * attention_flops(c.inputs[1], c.inputs[2], c.inputs[3]); };
  set_kernels<nn::attention_backward_fused_kernel, nn::attention_backward_composed_kernel>(grad);
  r.add(std::move(grad));
}

}  // namespace kiln
