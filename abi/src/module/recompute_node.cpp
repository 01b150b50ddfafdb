#include "module/recompute_node.hpp"

#include "handles.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "kiln/ops/autocast.hpp"
#include "module/module_error.hpp"
#include "module/module_handle.hpp"

namespace kiln::abi {
namespace {

// Puts the random stream at `replay` while it lives, and back where it was
// after: the replay draws what the first forward drew, and whatever comes
// next draws what it would have drawn without checkpointing.
class RandomReplay {
 public:
  RandomReplay(Runtime& rt, const GeneratorState& replay) : runtime_(rt), resume_(rt.generator_state()) {
    rt.set_generator_state(replay);
  }
  ~RandomReplay() { runtime_.set_generator_state(resume_); }
  RandomReplay(const RandomReplay&) = delete;
  RandomReplay& operator=(const RandomReplay&) = delete;

 private:
  Runtime& runtime_;
  GeneratorState resume_;
};

}  // namespace

RecomputeNode::RecomputeNode(const ModuleChild& module, std::span<kiln_tensor* const> inputs, Runtime& rt)
    : module_(module), random_(rt.generator_state()), autocast_(autocast_dtype(rt)) {
  next_edges.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i]->tensor;
    inputs_.push_back(t.detach());
    input_requires_grad_.push_back(t.requires_grad());
    if (t.requires_grad()) next_edges[i] = gradient_edge(t);
  }
}

std::vector<TensorRef> RecomputeNode::attach(const std::shared_ptr<RecomputeNode>& node,
                                             const std::vector<TensorRef>& outputs) {
  node->num_outputs = int(outputs.size());
  std::vector<TensorRef> attached;
  attached.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!is_floating(outputs[i]->tensor.dtype())) {
      attached.push_back(outputs[i]);
      continue;
    }
    // A new impl even when the module passed an input through, so the
    // input's own history is left alone.
    Tensor out = outputs[i]->tensor.detach();
    AutogradMeta& meta = out.impl()->autograd;
    meta.requires_grad = true;
    meta.grad_fn = node;
    meta.output_nr = int(i);
    attached.push_back(TensorRef::adopt(new_handle(outputs[i]->runtime, std::move(out))));
  }
  return attached;
}

std::vector<TensorRef> RecomputeNode::replay_inputs() const {
  kiln_runtime* rt = module_.module->runtime;
  std::vector<TensorRef> leaves;
  leaves.reserve(inputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    Tensor leaf = inputs_[i].detach();
    if (input_requires_grad_[i]) leaf.set_requires_grad(true);
    leaves.push_back(TensorRef::adopt(new_handle(rt, std::move(leaf))));
  }
  return leaves;
}

std::vector<Tensor> RecomputeNode::apply(Runtime& rt, std::vector<Tensor>& grad_outputs) {
  KILN_CHECK(!released_, Status::invalid_state,
             "backward through a Checkpoint whose graph has already been freed: the first backward released its "
             "saved inputs; pass retain_graph=true to that backward to run backward twice");
  const std::vector<TensorRef> leaves = replay_inputs();
  std::vector<TensorRef> outputs;
  {
    RandomReplay replay(rt, random_);
    GradModeGuard recording(rt, true);
    AutocastGuard autocast(rt, autocast_);
    outputs = forward_child(module_, 0, "Checkpoint", borrow(leaves));
  }
  KILN_CHECK(outputs.size() == size_t(num_outputs), Status::invalid_state, "Checkpoint: the module gave ",
             outputs.size(), " outputs when run again for backward, ", num_outputs, " the first time");

  std::vector<Tensor> roots, seeds;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i]->tensor;
    if (i >= grad_outputs.size() || !grad_outputs[i].defined() || !out.requires_grad()) continue;
    roots.push_back(out);
    seeds.push_back(grad_outputs[i]);
  }
  if (!roots.empty()) rt.backward(roots, seeds);

  std::vector<Tensor> grads(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i)
    if (input_requires_grad_[i]) grads[i] = leaves[i]->tensor.grad();
  return grads;
}

}  // namespace kiln::abi
