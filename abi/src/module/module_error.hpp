// Failures inside a model, told from where they happened: the dotted path of
// the layer, its index in its container, its type, the shapes it was given
// and the reason from the op or plugin, with the original status. Containers
// wrap a failing child once, and enclosing containers only extend the path.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kiln/error.hpp"
#include "handle_ref.hpp"
#include "module/module.hpp"

namespace kiln::abi {

class ModuleError : public Error {
 public:
  struct Where {
    std::string path;       // the child's name within its container; "" for the module called
    size_t index = 0;       // its index within that container
    std::string container;  // the container's type
  };
  ModuleError(Status status, Where where, std::string type, std::string inputs, std::string reason);

  // The failing module is inside a child named `name` of an enclosing container.
  void prepend_path(const std::string& name);
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  void compose();
  Where where_;
  std::string type_, inputs_, reason_, message_;
};

// "input f32[1, 64, 4, 4]", "inputs f32[2, 3], f32[2, 3]", "no inputs".
std::string describe_inputs(std::span<kiln_tensor* const> inputs);

// Runs `child`, the `index`-th child of a `container_type` container; any
// failure is rethrown as a ModuleError that says which child failed.
std::vector<TensorRef> forward_child(const ModuleChild& child, size_t index, const std::string& container_type,
                                     std::span<kiln_tensor* const> inputs);

// Runs the module a caller called; a failure of its own (not of a child) is
// rethrown naming its type and inputs.
std::vector<TensorRef> forward_module(Module& module, std::span<kiln_tensor* const> inputs);

// Throws the failure a C API call or a plugin callback reported: its status
// and this thread's last error message.
void throw_if_failed(kiln_status status);

// Handles of `values`, for passing them on as inputs (still owned by `values`).
std::vector<kiln_tensor*> borrow(const std::vector<TensorRef>& values);

}  // namespace kiln::abi
