// The trainer is written on the C API itself, as a host would write it: the
// model, optimizer, loaders and strategy are opaque handles to it. These
// helpers turn a failing C API call into a kiln::Error that says which part
// of the training loop failed, and hold the references the loop takes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string_view>

#include "handle_ref.hpp"
#include "kiln/kiln.h"

namespace kiln::train {

using abi::ModuleRef;
using abi::TensorRef;
using OptimizerRef = abi::HandleRef<kiln_optimizer, kiln_optimizer_retain, kiln_optimizer_release>;
using LoaderRef = abi::HandleRef<kiln_loader, kiln_loader_retain, kiln_loader_release>;

struct ExampleRelease {
  void operator()(kiln_example* ex) const { kiln_example_release(ex); }
};
using ExamplePtr = std::unique_ptr<kiln_example, ExampleRelease>;

// Throws the failure of a C API call (its status and kiln_last_error()),
// with `what` (the step of the loop that made the call) in front.
void check_call(kiln_status status, std::string_view what);

// Calls an op with one output on `inputs` and gives its result.
TensorRef call_op(kiln_runtime* rt, const kiln_op* op, std::initializer_list<kiln_tensor*> inputs,
                  const kiln_attr* attrs, size_t n_attrs, std::string_view what);

// The value of a one-element tensor of any dtype and device, as a double.
double read_scalar(kiln_runtime* rt, const kiln_op* cast, kiln_tensor* t, std::string_view what);

// The size of dimension 0 of `t` (1 for a scalar).
int64_t leading_dim(const kiln_tensor* t);

}  // namespace kiln::train
