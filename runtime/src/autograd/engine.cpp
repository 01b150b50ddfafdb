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

// How many edges reach each node from `roots`: a node runs once all of them
// have delivered their gradients.
std::unordered_map<Node*, int> count_dependencies(const std::vector<Node*>& roots) {
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack;
  for (Node* root : roots)
    if (deps.try_emplace(root, 0).second) stack.push_back(root);
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

// The gradient `root` starts from: `grad_output`, or ones for a one-element root.
Tensor seed_gradient(Runtime& rt, const Tensor& root, const Tensor& grad_output) {
  KILN_CHECK(root.defined(), Status::invalid_argument, "backward: the tensor is undefined");
  KILN_CHECK(root.requires_grad(), Status::invalid_state,
             "backward: the tensor does not require grad (no input of the ops that made it requires grad, or it "
             "was computed with grad recording off)");
  Tensor seed = grad_output;
  if (!seed.defined()) {
    KILN_CHECK(root.numel() == 1, Status::invalid_argument, "backward: a gradient must be given for a root of ",
               root.numel(), " elements (shape ", to_string(root.shape()), "); it is implied only for one element");
    seed = rt.full(root.shape(), 1.0, root.dtype(), root.device());
  }
  KILN_CHECK(seed.shape() == root.shape(), Status::shape_mismatch, "backward: gradient of shape ",
             to_string(seed.shape()), " for a root of shape ", to_string(root.shape()));
  return seed;
}

// Adds `grad` into the gradient slot `input_nr` of `node`.
void deliver(Runtime& rt, std::unordered_map<Node*, std::vector<Tensor>>& buffers, Node* node, int input_nr,
             Tensor grad) {
  std::vector<Tensor>& slot = buffers[node];
  slot.resize(size_t(node->num_outputs));
  Tensor& acc = slot[size_t(input_nr)];
  acc = acc.defined() ? rt.call1("add", {acc, grad}) : std::move(grad);
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
  backward(std::span<const Tensor>(&root, 1), std::span<const Tensor>(&grad_output, 1), retain_graph);
}

void Runtime::backward(std::span<const Tensor> roots, std::span<const Tensor> grad_outputs, bool retain_graph) {
  // Every op called from here on (the seeds' too) is part of the backward
  // pass in a profile.
  ProfilePhaseGuard backward_phase(ProfilePhase::backward);
  KILN_CHECK(roots.size() == grad_outputs.size(), Status::invalid_argument, "backward: ", grad_outputs.size(),
             " gradients for ", roots.size(), " roots");
  std::vector<Tensor> seeds;
  seeds.reserve(roots.size());
  for (size_t i = 0; i < roots.size(); ++i) seeds.push_back(seed_gradient(*this, roots[i], grad_outputs[i]));

  NoGradGuard no_grad(*this);
  // Backward ops run in the dtypes the forward recorded, whether or not
  // backward is called inside an autocast scope.
  std::optional<AutocastGuard> no_autocast;
  if (autocast_dtype(*this) != DType::f32) no_autocast.emplace(*this, DType::f32);

  std::unordered_map<Node*, std::vector<Tensor>> buffers;
  std::vector<std::shared_ptr<Node>> root_nodes;
  for (size_t i = 0; i < roots.size(); ++i) {
    std::shared_ptr<Node> node = roots[i].grad_fn();
    if (!node) {  // a leaf: its gradient is the seed itself
      AccumulateGrad acc(roots[i].impl_ptr());
      std::vector<Tensor> g{seeds[i]};
      acc.apply(*this, g);
      continue;
    }
    deliver(*this, buffers, node.get(), roots[i].impl()->autograd.output_nr, std::move(seeds[i]));
    root_nodes.push_back(std::move(node));
  }
  std::vector<Node*> starts;
  for (const std::shared_ptr<Node>& n : root_nodes) starts.push_back(n.get());
  std::unordered_map<Node*, int> deps = count_dependencies(starts);

  // A root that another root's graph also reaches waits for its gradients.
  std::vector<std::shared_ptr<Node>> ready;
  for (std::shared_ptr<Node>& n : root_nodes)
    if (deps[n.get()] == 0 && std::none_of(ready.begin(), ready.end(), [&](auto& r) { return r == n; }))
      ready.push_back(n);
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
      if (i < input_grads.size() && input_grads[i].defined())
        deliver(*this, buffers, e.node.get(), e.input_nr, std::move(input_grads[i]));
      if (--deps[e.node.get()] == 0) ready.push_back(e.node);
    }
    if (!retain_graph) node->release();
  }
}

}  // namespace kiln
