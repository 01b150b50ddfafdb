// Reverse-mode execution: nodes run once all their consumers have delivered
// gradients (dependency counting over the graph reachable from the root).
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "kiln/autograd/grad_mode.hpp"
#include "kiln/autograd/node.hpp"
#include "kiln/error.hpp"
#include "kiln/ops/autocast.hpp"
#include "kiln/runtime.hpp"

namespace kiln {
namespace {

std::unordered_map<Node*, int> count_dependencies(Node* root) {
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack{root};
  deps[root] = 0;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges) {
      if (!e.node) continue;
      auto [it, inserted] = deps.try_emplace(e.node.get(), 0);
      ++it->second;
      if (inserted) stack.push_back(e.node.get());
    }
  }
  return deps;
}

// Runs one backward function; a profile records it as "<op> backward", on
// the device of its first gradient, with the ops it calls inside.
std::vector<Tensor> apply_node(Runtime& rt, Node& node, std::vector<Tensor>& grads) {
  if (!rt.profiler().enabled()) return node.apply(rt, grads);
  const auto first = std::find_if(grads.begin(), grads.end(), [](const Tensor& g) { return g.defined(); });
  const Device device = first == grads.end() ? Device::cpu() : first->device();
  ProfiledCall profiled(rt.profiler(), node.name() + " backward", device, grads);
  return node.apply(rt, grads);
}

}  // namespace

void Runtime::backward(const Tensor& root, const Tensor& grad_output, bool retain_graph) {
  // Every op called from here on (the seed's too) is part of the backward
  // pass in a profile.
  ProfilePhaseGuard backward_phase(ProfilePhase::backward);
  KILN_CHECK(root.defined(), Status::invalid_argument, "backward: the tensor is undefined");
  KILN_CHECK(root.requires_grad(), Status::invalid_state,
             "backward: the tensor does not require grad (no input of the ops that made it requires grad, or it "
             "was computed with grad recording off)");
  Tensor seed = grad_output;
  if (!seed.defined()) {
    KILN_CHECK(root.numel() == 1, Status::invalid_argument, "backward: a gradient must be given for a root of ",
               root.numel(), " elements (shape ", to_string(root.shape()), "); it is implied only for one element");
    seed = full(root.shape(), 1.0, root.dtype(), root.device());
  }
  KILN_CHECK(seed.shape() == root.shape(), Status::shape_mismatch, "backward: gradient of shape ",
             to_string(seed.shape()), " for a root of shape ", to_string(root.shape()));

  NoGradGuard no_grad(*this);
  // Backward ops run in the dtypes the forward recorded, whether or not
  // backward is called inside an autocast scope.
  std::optional<AutocastGuard> no_autocast;
  if (autocast_dtype(*this) != DType::f32) no_autocast.emplace(*this, DType::f32);
  std::shared_ptr<Node> root_node = root.grad_fn();
  int root_input = root.impl()->autograd.output_nr;
  if (!root_node) {  // a leaf: its gradient is the seed itself
    AccumulateGrad acc(root.impl_ptr());
    std::vector<Tensor> g{seed};
    acc.apply(*this, g);
    return;
  }

  std::unordered_map<Node*, int> deps = count_dependencies(root_node.get());
  std::unordered_map<Node*, std::vector<Tensor>> buffers;
  buffers[root_node.get()].resize(size_t(root_node->num_outputs));
  buffers[root_node.get()][size_t(root_input)] = seed;

  std::vector<std::shared_ptr<Node>> ready{root_node};
  while (!ready.empty()) {
    std::shared_ptr<Node> node = std::move(ready.back());
    ready.pop_back();
    std::vector<Tensor> grads = std::move(buffers[node.get()]);
    buffers.erase(node.get());
    grads.resize(size_t(node->num_outputs));
    std::vector<Tensor> input_grads = apply_node(*this, *node, grads);
    grads.clear();
    for (size_t i = 0; i < node->next_edges.size(); ++i) {
      const Edge& e = node->next_edges[i];
      if (!e.node) continue;
      if (i < input_grads.size() && input_grads[i].defined()) {
        std::vector<Tensor>& slot = buffers[e.node.get()];
        slot.resize(size_t(e.node->num_outputs));
        Tensor& acc = slot[size_t(e.input_nr)];
        acc = acc.defined() ? call1("add", {acc, input_grads[i]}) : std::move(input_grads[i]);
      }
      if (--deps[e.node.get()] == 0) ready.push_back(e.node);
    }
    if (!retain_graph) node->release();
  }
}

}  // namespace kiln
