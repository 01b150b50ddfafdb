// The tape node of a Checkpoint (module/checkpoint.hpp): it stands for the
// whole forward of one module, recorded with recording off. Its backward
// replays that forward with recording on, from the random stream and
// autocast dtype of the first run, and runs backward through the replay:
// gradients of the module's parameters accumulate into their .grad there,
// and the inputs' gradients are returned to the enclosing backward.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kiln/autograd/node.hpp"
#include "kiln/util/philox.hpp"
#include "module/module.hpp"

namespace kiln::abi {

class RecomputeNode final : public Node {
 public:
  // Keeps `inputs` (detached) and the state of `rt` that the forward about
  // to run will see.
  RecomputeNode(const ModuleChild& module, std::span<kiln_tensor* const> inputs, Runtime& rt);

  // The forward's outputs, as new handles whose gradients flow into `node`
  // (integer outputs carry none and are returned as they are).
  static std::vector<TensorRef> attach(const std::shared_ptr<RecomputeNode>& node,
                                       const std::vector<TensorRef>& outputs);

  std::vector<Tensor> apply(Runtime& rt, std::vector<Tensor>& grad_outputs) override;
  void release() override {
    inputs_.clear();
    released_ = true;
  }
  std::string name() const override { return "checkpoint"; }

 private:
  // Leaves standing for the inputs in the replay; those whose input
  // requires grad receive its gradient.
  std::vector<TensorRef> replay_inputs() const;

  ModuleChild module_;
  std::vector<Tensor> inputs_;  // empty once released
  std::vector<bool> input_requires_grad_;
  GeneratorState random_;
  DType autocast_;
  bool released_ = false;
};

}  // namespace kiln::abi
