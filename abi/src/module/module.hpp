// The module hierarchy behind kiln_module: a module has named parameters and
// buffers of its own, named children, a train/eval flag and a forward. Leaf
// layers come from plugins (LayerModule), single ops make OpModule, and the
// containers (Sequential, Graph) are built here. Values flow between modules
// as tensor handles, the currency of plugin layers.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "handle_ref.hpp"

namespace kiln::abi {

struct NamedTensor {
  std::string name;
  TensorRef tensor;
};

struct ModuleChild {
  std::string name;
  ModuleRef module;
};

class Module {
 public:
  // `runtime` is the one the owning kiln_module holds a reference on.
  explicit Module(kiln_runtime* runtime) : runtime_(runtime) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // "Linear", "Sequential", "Graph", "op:add".
  virtual const std::string& type() const = 0;
  // Failures throw kiln::Error; a container names the child that failed
  // (see ModuleError).
  virtual std::vector<TensorRef> forward(std::span<kiln_tensor* const> inputs) = 0;

  // What this module holds itself, not counting its children's.
  virtual std::span<const NamedTensor> parameters() const { return {}; }
  virtual std::span<const NamedTensor> buffers() const { return {}; }
  virtual std::span<const ModuleChild> children() const { return {}; }

  // This module's flag only; kiln::abi::set_training reaches the children.
  bool training() const { return training_; }
  void set_own_training(bool training) { training_ = training; }

  kiln_runtime* runtime() const { return runtime_; }

 private:
  kiln_runtime* runtime_;
  bool training_ = true;
};

}  // namespace kiln::abi
