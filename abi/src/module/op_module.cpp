#include "module/op_module.hpp"

#include <array>
#include <vector>

#include "handles.hpp"
#include "module/module_error.hpp"

namespace kiln::abi {
namespace {

// Room for the outputs of one op call; ops return at most a handful (split
// returns as many as it was asked for, bounded by this).
constexpr size_t kMaxOpOutputs = 64;

// A copy of `attrs` that owns what they point to: a schema whose defaults
// are the given values, completed with nothing.
Config copy_attrs(const std::string& owner, const kiln_attr* attrs, size_t n_attrs) {
  KILN_CHECK(attrs || n_attrs == 0, Status::invalid_argument, owner, ": 'attrs' is NULL with ", n_attrs, " entries");
  std::vector<kiln_attr_spec> specs;
  specs.reserve(n_attrs);
  for (size_t i = 0; i < n_attrs; ++i) {
    KILN_CHECK(attrs[i].type != KILN_ATTR_TENSOR, Status::invalid_argument, owner, ": attribute '",
               attrs[i].name ? attrs[i].name : "(NULL)", "' is a tensor; op attributes cannot be tensors");
    specs.push_back({attrs[i], 0, nullptr});
  }
  return ConfigSchema(specs.data(), specs.size(), owner).make(nullptr, 0);
}

}  // namespace

OpModule::OpModule(kiln_runtime* rt, const kiln_op* op, const kiln_attr* attrs, size_t n_attrs)
    : Module(rt), op_(op), type_("op:" + op->def->name), attrs_(copy_attrs(type_, attrs, n_attrs)) {
  KILN_CHECK(op->owner == rt, Status::invalid_argument, type_, ": the op was looked up in another runtime");
}

std::vector<TensorRef> OpModule::forward(std::span<kiln_tensor* const> inputs) {
  std::array<kiln_tensor*, kMaxOpOutputs> outputs{};
  size_t n_outputs = 0;
  const kiln_status status = kiln_op_call(runtime(), op_, inputs.data(), inputs.size(), attrs_.data(), attrs_.size(),
                                          outputs.data(), outputs.size(), &n_outputs);
  throw_if_failed(status);
  std::vector<TensorRef> result;
  result.reserve(n_outputs);
  for (size_t i = 0; i < n_outputs; ++i) result.push_back(TensorRef::adopt(outputs[i]));
  return result;
}

}  // namespace kiln::abi
