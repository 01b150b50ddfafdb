#include "module/sequential.hpp"

#include <algorithm>

#include "module/module_error.hpp"
#include "module/module_handle.hpp"
#include "module/module_tree.hpp"

namespace kiln::abi {

const std::string& Sequential::type() const {
  static const std::string name = "Sequential";
  return name;
}

std::vector<TensorRef> Sequential::forward(std::span<kiln_tensor* const> inputs) {
  std::vector<TensorRef> values;
  values.reserve(inputs.size());
  for (kiln_tensor* t : inputs) values.push_back(TensorRef::retain(t));
  for (size_t i = 0; i < children_.size(); ++i) {
    const std::vector<kiln_tensor*> args = borrow(values);
    values = forward_child(children_[i], i, type(), args);
  }
  return values;
}

void Sequential::append(const kiln_module& self, std::string name, kiln_module* child) {
  if (name.empty()) name = std::to_string(children_.size());
  check_child_name(name, "child");
  KILN_CHECK(std::none_of(children_.begin(), children_.end(), [&](const ModuleChild& c) { return c.name == name; }),
             Status::invalid_argument, "the Sequential already has a child named '", name, "'");
  KILN_CHECK(child->runtime == runtime(), Status::invalid_argument, "the child belongs to another runtime");
  KILN_CHECK(!tree_contains(*child, &self), Status::invalid_argument,
             "the child contains this Sequential; a module cannot be inside itself");
  children_.push_back({std::move(name), ModuleRef::retain(child)});
}

}  // namespace kiln::abi
