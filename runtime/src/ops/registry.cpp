#include "kiln/ops/registry.hpp"

#include <algorithm>

#include "kiln/error.hpp"

namespace kiln {

OpDef& OpRegistry::add(OpDef def) {
  KILN_CHECK(!def.name.empty(), Status::invalid_argument, "an op needs a name");
  KILN_CHECK(def.infer != nullptr || def.view != nullptr, Status::invalid_argument, "op '", def.name,
             "' has neither a shape function nor a view function");
  for (size_t i = 0; i + 1 < def.inputs.size(); ++i)
    KILN_CHECK(!def.inputs[i].variadic, Status::invalid_argument, "op '", def.name,
               "': only the last input may be variadic");
  std::lock_guard lock(mutex_);
  KILN_CHECK(ops_.find(def.name) == ops_.end(), Status::invalid_argument, "op '", def.name,
             "' is already registered");
  auto owned = std::make_unique<OpDef>(std::move(def));
  OpDef& ref = *owned;
  ops_.emplace(ref.name, std::move(owned));
  return ref;
}

const OpDef* OpRegistry::find(std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

const OpDef& OpRegistry::get(std::string_view name) const {
  if (const OpDef* op = find(name)) return *op;
  throw_error(Status::not_found, str_cat("unknown op '", name, "'", close_matches(name, names())));
}

std::string close_matches(std::string_view name, const std::vector<std::string>& candidates) {
  std::string hint;
  for (const std::string& n : candidates) {
    if (!name.empty() && n.compare(0, std::min<size_t>(3, name.size()), name.substr(0, 3)) == 0) {
      hint += hint.empty() ? "; did you mean: " : ", ";
      hint += n;
    }
  }
  return hint;
}

void OpRegistry::set_kernel(std::string_view op, DeviceType device, DType dtype, KernelFn fn) {
  std::lock_guard lock(mutex_);
  auto it = ops_.find(op);
  KILN_CHECK(it != ops_.end(), Status::not_found, "cannot add a kernel to unknown op '", op, "'");
  it->second->set_kernel(device, dtype, fn);
}

std::vector<std::string> OpRegistry::names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  out.reserve(ops_.size());
  for (const auto& [name, def] : ops_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kiln
