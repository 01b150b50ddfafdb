// A module without parameters that calls one op of its runtime with fixed
// attributes: an "add" joining two graph branches, a "reshape".
#pragma once

#include <memory>
#include <string>

#include "module/module.hpp"
#include "plugin/config.hpp"

namespace kiln::abi {

class OpModule final : public Module {
 public:
  // `attrs` are copied; the op checks them at the first forward.
  OpModule(kiln_runtime* rt, const kiln_op* op, const kiln_attr* attrs, size_t n_attrs);

  const std::string& type() const override { return type_; }
  std::vector<TensorRef> forward(std::span<kiln_tensor* const> inputs) override;

 private:
  const kiln_op* op_;  // owned by the runtime, which outlives this module
  std::string type_;   // "op:<name>"
  Config attrs_;
};

}  // namespace kiln::abi
