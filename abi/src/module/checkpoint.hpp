// Checkpoint: activation checkpointing of one module. Its forward runs the
// module with recording off, so none of the module's intermediate values
// stay alive for backward; the tape gets one node instead, which keeps the
// inputs, the position of the random stream and the autocast dtype. When
// backward reaches that node it runs the module's forward again with
// recording on, from the same random position (dropout draws the same
// masks), and back-propagates through it: the gradients are those of the
// plain module, bit for bit, for the price of a second forward.
//
// The module is a child with an empty name, which dotted names skip: its
// parameters and buffers keep the names they have unwrapped, so weights
// files and state dictionaries do not change when a layer is wrapped.
#pragma once

#include <string>
#include <vector>

#include "module/module.hpp"

namespace kiln::abi {

class Checkpoint final : public Module {
 public:
  // `inner` must belong to `rt`; the container takes its own reference.
  Checkpoint(kiln_runtime* rt, kiln_module* inner);

  const std::string& type() const override;
  std::vector<TensorRef> forward(std::span<kiln_tensor* const> inputs) override;
  std::span<const ModuleChild> children() const override { return {&inner_, 1}; }

 private:
  // True when backward could reach the module: an input or a parameter
  // requires grad.
  bool needs_gradient(std::span<kiln_tensor* const> inputs) const;

  ModuleChild inner_;
};

}  // namespace kiln::abi
