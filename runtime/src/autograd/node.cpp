#include "kiln/autograd/node.hpp"

#include <algorithm>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"

namespace kiln {

std::vector<Tensor> OpNode::apply(Runtime& rt, std::vector<Tensor>& grad_outputs) {
  KILN_CHECK(!released_, Status::invalid_state, "backward through a graph that has already been freed (at op '",
             op_.name, "'): the first backward released its saved tensors; pass retain_graph=true to that "
             "backward to run backward twice");
  // Outputs for the backward alone never receive a gradient: they get none
  // rather than zeros the backward would not read.
  const size_t seen = grad_outputs.size() - std::min(grad_outputs.size(), op_.backward_only_outputs);
  for (size_t i = 0; i < seen; ++i) {
    if (grad_outputs[i].defined() || !is_floating(output_meta[i].dtype)) continue;
    grad_outputs[i] = rt.full(output_meta[i].shape, 0.0, output_meta[i].dtype, output_meta[i].device);
  }
  std::vector<bool> needs(next_edges.size());
  for (size_t i = 0; i < next_edges.size(); ++i) needs[i] = next_edges[i].node != nullptr;
  // std::vector<bool> has no contiguous storage to span over.
  std::unique_ptr<bool[]> needs_flat(new bool[needs.size()]);
  for (size_t i = 0; i < needs.size(); ++i) needs_flat[i] = needs[i];

  BackwardCall call{rt, op_, saved_inputs, input_meta, saved_outputs, grad_outputs, attrs_,
                    std::span<const bool>(needs_flat.get(), needs.size())};
  std::vector<Tensor> grads = op_.backward(call);
  KILN_CHECK(grads.size() == next_edges.size(), Status::internal, "backward of op '", op_.name, "' returned ",
             grads.size(), " gradients for ", next_edges.size(), " inputs");
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!needs[i] || !grads[i].defined()) continue;
    KILN_CHECK(grads[i].shape() == input_meta[i].shape, Status::internal, "backward of op '", op_.name,
               "' returned a gradient of shape ", to_string(grads[i].shape()), " for input ", i, " of shape ",
               to_string(input_meta[i].shape));
  }
  return grads;
}

void OpNode::release() {
  released_ = true;
  saved_inputs.clear();
  saved_outputs.clear();
  input_meta.clear();
}

std::vector<Tensor> AccumulateGrad::apply(Runtime& rt, std::vector<Tensor>& grad_outputs) {
  Tensor incoming = std::move(grad_outputs[0]);
  if (!incoming.defined()) return {};
  KILN_CHECK(incoming.shape() == leaf_->shape, Status::internal, "gradient of shape ",
             to_string(incoming.shape()), " for a leaf of shape ", to_string(leaf_->shape));
  AutogradMeta& meta = leaf_->autograd;
  if (meta.grad) {
    meta.grad = rt.call1("add", {Tensor(meta.grad), incoming}).impl_ptr();
  } else if (incoming.impl_ptr().use_count() == 1 && incoming.storage().use_count() == 1 && incoming.is_contiguous()) {
    meta.grad = incoming.impl_ptr();  // nobody else sees this buffer: keep it
  } else {
    // The gradient buffer is shared with other parts of the graph; give the
    // leaf its own so later in-place updates of .grad touch nothing else.
    meta.grad = rt.call1("copy", {incoming}).impl_ptr();
  }
  if (meta.grad_hooks) {
    // A copy: a hook may remove itself (or others) while they run.
    std::vector<std::pair<uint64_t, std::function<void(const Tensor&)>>> hooks = meta.grad_hooks->hooks;
    Tensor leaf(leaf_);
    for (auto& entry : hooks) entry.second(leaf);
  }
  return {};
}

}  // namespace kiln
