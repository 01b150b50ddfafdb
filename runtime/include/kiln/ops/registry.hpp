// The ops a runtime knows, by name. Registration happens by explicit calls
// (the built-in set from Runtime's constructor, plugins from their entry
// function), never from static initializers.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/ops/op_def.hpp"

namespace kiln {

// "; did you mean: a, b" listing the `candidates` that start like `name`
// (a typo is then easy to spot), or "" when none does.
std::string close_matches(std::string_view name, const std::vector<std::string>& candidates);

class OpRegistry {
 public:
  // Takes the definition; throws if the name is taken or the schema is malformed.
  OpDef& add(OpDef def);
  const OpDef* find(std::string_view name) const;  // null when unknown
  const OpDef& get(std::string_view name) const;   // throws not_found naming close matches
  std::vector<std::string> names() const;
  // Adds or replaces the kernel of a registered op for one device and dtype
  // (a backend adding its kernels to ops defined elsewhere). Registration
  // happens before the op is called; kernels are not swapped under callers.
  void set_kernel(std::string_view op, DeviceType device, DType dtype, KernelFn fn);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::mutex mutex_;
  // OpDefs live in unique_ptrs so handles stay valid while the map grows.
  std::unordered_map<std::string, std::unique_ptr<OpDef>, Hash, std::equal_to<>> ops_;
};

}  // namespace kiln
