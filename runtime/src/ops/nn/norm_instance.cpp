// instance_norm over [N, C, ...], as torch.nn.functional.instance_norm
// without running statistics: each (sample, channel) is normalised by its
// own mean and biased variance, then scaled by weight[c] and shifted by
// bias[c]. That is group_norm with one channel per group, whose kernels (on
// every device) and backward it runs.
#include "kernel_of.hpp"
#include "kiln/ops/helpers.hpp"
#include "kiln/runtime.hpp"
#include "norm_ops.hpp"

namespace kiln::nn {
namespace {

// group_norm's attributes for an instance_norm call on `input`.
Attrs group_norm_attrs(const OpDef& group_norm, const OpDef& op, const Attrs& attrs, const Shape& input) {
  return group_norm.make_attrs({{"num_groups", input[1]}, {"eps", op.attr_real(attrs, "eps")}});
}

void instance_norm_infer(InferCall& c) {
  check_floating(c, 0);
  check_same_dtype(c);
  const Shape& s = c.inputs[0].shape();
  KILN_CHECK(s.rank() >= 3, Status::shape_mismatch, "op '", c.op.name,
             "': input must be [N, C, ...] with at least one spatial dim (rank 3 or more), got shape ", to_string(s));
  KILN_CHECK(s.numel() == 0 || s.numel() / (s[0] * s[1]) > 1, Status::shape_mismatch, "op '", c.op.name,
             "': expected more than 1 spatial element when training, got input of shape ", to_string(s));
  for (size_t i = 1; i < c.inputs.size(); ++i) {
    const Tensor& t = c.inputs[i];
    KILN_CHECK(!t.defined() || t.shape() == Shape{s[1]}, Status::shape_mismatch, "op '", c.op.name, "': ",
               c.op.inputs[i].name, " has shape ", to_string(t.shape()), " but the input of shape ", to_string(s),
               " has ", s[1], " channels; expected [", s[1], "]");
  }
  c.outputs.push_back({s, c.inputs[0].dtype(), c.device});
}

void instance_norm_kernel(const KernelCall& c) {
  const OpDef& group_norm = c.runtime.op("group_norm");
  run_kernel_of(c, group_norm, c.inputs, c.outputs,
                group_norm_attrs(group_norm, c.op, c.attrs, c.inputs[0].shape()));
}

std::vector<Tensor> instance_norm_backward(const BackwardCall& c) {
  const OpDef& group_norm = c.runtime.op("group_norm");
  const Attrs attrs = group_norm_attrs(group_norm, c.op, c.attrs, c.input_meta[0].shape);
  return group_norm.backward(BackwardCall{c.runtime, group_norm, c.inputs, c.input_meta, c.outputs, c.grad_outputs,
                                          attrs, c.needs_input_grad});
}

}  // namespace

void register_instance_norm_op(OpRegistry& r) {
  OpDef op;
  op.name = "instance_norm";
  op.inputs = {{"input"}, {"weight", true}, {"bias", true}};
  op.attrs = {attr_real("eps", 1e-5)};
  op.infer = instance_norm_infer;
  op.backward = instance_norm_backward;
  op.saves_outputs = false;
  op.precision = PrecisionCategory::f32;
  mirror_kernels(op, r.get("group_norm"), DeviceType::cpu, instance_norm_kernel);
  r.add(std::move(op));
}

}  // namespace kiln::nn
