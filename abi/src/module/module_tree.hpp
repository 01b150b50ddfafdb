// Walks over a module and everything inside it (container children and
// layers' sub-layers): dotted names of parameters and buffers, train/eval
// for the whole tree, and the checks containers make before adopting a child.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "module/module_handle.hpp"

namespace kiln::abi {

// A tensor of the tree with its dotted name ("0.weight", "block.first.bias").
struct TreeTensor {
  std::string name;
  kiln_tensor* tensor;  // borrowed from the module that holds it
};

// Pre-order, the module itself first; `path` is "" for the root.
void for_each_module(const kiln_module& root, const std::function<void(Module&, const std::string& path)>& visit);

// In a fixed order: a module's own tensors, then each child's. A tensor
// held in two places (a shared layer) appears once, under its first name.
std::vector<TreeTensor> tree_parameters(const kiln_module& root);
std::vector<TreeTensor> tree_buffers(const kiln_module& root);

void set_training(kiln_module& root, bool training);

// True when `target` is `root` or anywhere inside it.
bool tree_contains(const kiln_module& root, const kiln_module* target);

// The train/eval flag of every module in a tree, put back when it goes.
class TrainingSnapshot {
 public:
  explicit TrainingSnapshot(const kiln_module& root);
  ~TrainingSnapshot();
  TrainingSnapshot(const TrainingSnapshot&) = delete;
  TrainingSnapshot& operator=(const TrainingSnapshot&) = delete;

 private:
  std::vector<std::pair<Module*, bool>> flags_;
};

// Throws invalid_argument unless `name` can name a child or tensor in a
// dotted path: not empty, without '.' or ':'. `what` says what it names.
void check_child_name(const std::string& name, const char* what);

}  // namespace kiln::abi
