#include "module/module_tree.hpp"

#include <unordered_set>

#include "kiln/error.hpp"

namespace kiln::abi {
namespace {

// A child with an empty name (a Checkpoint's module) adds nothing to the path.
std::string join_path(const std::string& prefix, const std::string& name) {
  if (name.empty()) return prefix;
  return prefix.empty() ? name : prefix + "." + name;
}

void visit_tree(const kiln_module& m, const std::string& path,
                const std::function<void(Module&, const std::string&)>& visit) {
  visit(*m.module, path);
  for (const ModuleChild& child : m.module->children())
    visit_tree(*child.module.get(), join_path(path, child.name), visit);
}

template <class Own>
std::vector<TreeTensor> tree_tensors(const kiln_module& root, Own own) {
  std::vector<TreeTensor> result;
  std::unordered_set<const kiln_tensor*> seen;
  for_each_module(root, [&](Module& m, const std::string& path) {
    for (const NamedTensor& t : own(m))
      if (seen.insert(t.tensor.get()).second) result.push_back({join_path(path, t.name), t.tensor.get()});
  });
  return result;
}

}  // namespace

void for_each_module(const kiln_module& root, const std::function<void(Module&, const std::string& path)>& visit) {
  visit_tree(root, "", visit);
}

std::vector<TreeTensor> tree_parameters(const kiln_module& root) {
  return tree_tensors(root, [](const Module& m) { return m.parameters(); });
}

std::vector<TreeTensor> tree_buffers(const kiln_module& root) {
  return tree_tensors(root, [](const Module& m) { return m.buffers(); });
}

void set_training(kiln_module& root, bool training) {
  for_each_module(root, [training](Module& m, const std::string&) { m.set_own_training(training); });
}

bool tree_contains(const kiln_module& root, const kiln_module* target) {
  if (&root == target) return true;
  for (const ModuleChild& child : root.module->children())
    if (tree_contains(*child.module.get(), target)) return true;
  return false;
}

TrainingSnapshot::TrainingSnapshot(const kiln_module& root) {
  for_each_module(root, [this](Module& m, const std::string&) { flags_.emplace_back(&m, m.training()); });
}

TrainingSnapshot::~TrainingSnapshot() {
  for (auto& [module, training] : flags_) module->set_own_training(training);
}

void check_child_name(const std::string& name, const char* what) {
  KILN_CHECK(!name.empty(), Status::invalid_argument, what, " name is empty; expected a name without '.' or ':'");
  KILN_CHECK(name.find_first_of(".:") == std::string::npos, Status::invalid_argument, what, " name '", name,
             "' contains '.' or ':', which separate the parts of dotted names and graph outputs");
}

}  // namespace kiln::abi
