// Sequential: each child's outputs are the next one's inputs; with no
// children it passes its inputs through.
#pragma once

#include <string>
#include <vector>

#include "module/module.hpp"

namespace kiln::abi {

class Sequential final : public Module {
 public:
  using Module::Module;

  const std::string& type() const override;
  std::vector<TensorRef> forward(std::span<kiln_tensor* const> inputs) override;
  std::span<const ModuleChild> children() const override { return children_; }

  // `name` empty: the child is named by its index. Checks the name is free
  // and that `child` does not contain this container.
  void append(const kiln_module& self, std::string name, kiln_module* child);

 private:
  std::vector<ModuleChild> children_;
};

}  // namespace kiln::abi
