#include "module/module_error.hpp"

#include "handles.hpp"
#include "module/module_handle.hpp"

namespace kiln::abi {

ModuleError::ModuleError(Status status, Where where, std::string type, std::string inputs, std::string reason)
    : Error(status, reason),
      where_(std::move(where)),
      type_(std::move(type)),
      inputs_(std::move(inputs)),
      reason_(std::move(reason)) {
  compose();
}

void ModuleError::prepend_path(const std::string& name) {
  where_.path = where_.path.empty() ? name : name + "." + where_.path;
  compose();
}

void ModuleError::compose() {
  if (where_.path.empty()) {
    message_ = str_cat(type_, " on ", inputs_, ": ", reason_);
  } else {
    message_ = str_cat("layer '", where_.path, "' (", type_, ", index ", where_.index, " in ", where_.container,
                       ") on ", inputs_, ": ", reason_);
  }
}

std::string describe_inputs(std::span<kiln_tensor* const> inputs) {
  if (inputs.empty()) return "no inputs";
  std::string text = inputs.size() == 1 ? "input " : "inputs ";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i]->tensor;
    text += str_cat(i == 0 ? "" : ", ", dtype_name(t.dtype()), to_string(t.shape()));
  }
  return text;
}

namespace {

// Runs `module`; a failure that is not already placed becomes a ModuleError at `where`.
std::vector<TensorRef> forward_at(Module& module, const ModuleError::Where& where,
                                  std::span<kiln_tensor* const> inputs) {
  try {
    return module.forward(inputs);
  } catch (ModuleError& e) {
    if (!where.path.empty()) e.prepend_path(where.path);
    throw;
  } catch (const Error& e) {
    throw ModuleError(e.status(), where, module.type(), describe_inputs(inputs), e.what());
  }
}

}  // namespace

std::vector<TensorRef> forward_child(const ModuleChild& child, size_t index, const std::string& container_type,
                                     std::span<kiln_tensor* const> inputs) {
  return forward_at(*child.module->module, {child.name, index, container_type}, inputs);
}

std::vector<TensorRef> forward_module(Module& module, std::span<kiln_tensor* const> inputs) {
  return forward_at(module, {}, inputs);
}

void throw_if_failed(kiln_status status) {
  if (status != KILN_OK) throw Error(Status(status), kiln_last_error());
}

std::vector<kiln_tensor*> borrow(const std::vector<TensorRef>& values) {
  std::vector<kiln_tensor*> handles;
  handles.reserve(values.size());
  for (const TensorRef& v : values) handles.push_back(v.get());
  return handles;
}

}  // namespace kiln::abi
