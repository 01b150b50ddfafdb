#include "module/checkpoint.hpp"

#include <algorithm>

#include "handles.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "module/module_error.hpp"
#include "module/module_tree.hpp"
#include "module/recompute_node.hpp"

namespace kiln::abi {

Checkpoint::Checkpoint(kiln_runtime* rt, kiln_module* inner) : Module(rt) {
  KILN_CHECK(inner->runtime == rt, Status::invalid_argument, "the module belongs to another runtime");
  inner_ = {"", ModuleRef::retain(inner)};
}

const std::string& Checkpoint::type() const {
  static const std::string name = "Checkpoint";
  return name;
}

bool Checkpoint::needs_gradient(std::span<kiln_tensor* const> inputs) const {
  const auto requires_grad = [](const kiln_tensor* t) { return t->tensor.requires_grad(); };
  if (std::any_of(inputs.begin(), inputs.end(), requires_grad)) return true;
  const std::vector<TreeTensor> params = tree_parameters(*inner_.module.get());
  return std::any_of(params.begin(), params.end(), [&](const TreeTensor& p) { return requires_grad(p.tensor); });
}

std::vector<TensorRef> Checkpoint::forward(std::span<kiln_tensor* const> inputs) {
  Runtime& rt = runtime()->runtime;
  // Nothing to recompute for: evaluation, shape inference, frozen modules.
  if (!grad_enabled(rt.id()) || !needs_gradient(inputs)) return forward_child(inner_, 0, type(), inputs);

  // Taken before the forward, which advances the random stream.
  auto node = std::make_shared<RecomputeNode>(inner_, inputs, rt);
  std::vector<TensorRef> outputs;
  {
    NoGradGuard no_grad(rt);
    outputs = forward_child(inner_, 0, type(), inputs);
  }
  return RecomputeNode::attach(node, outputs);
}

}  // namespace kiln::abi
