// What a kiln_module handle is: an atomic reference count, a reference on
// its runtime and the module. The module goes before the runtime reference,
// so its tensors and plugin state are freed while the runtime still lives.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "kiln/kiln.h"
#include "module/module.hpp"

struct kiln_module {
  kiln_module(kiln_runtime* rt, std::unique_ptr<kiln::abi::Module> m) : runtime(rt), module(std::move(m)) {
    kiln_runtime_retain(rt);
  }
  ~kiln_module() {
    module.reset();
    kiln_runtime_release(runtime);
  }
  kiln_module(const kiln_module&) = delete;
  kiln_module& operator=(const kiln_module&) = delete;

  // A copy of `name` that lives as long as the handle: the dotted names
  // kiln_module_parameter and kiln_module_buffer give out.
  const char* keep_name(std::string name) const {
    std::lock_guard lock(names_mutex);
    return names.insert(std::move(name)).first->c_str();
  }

  std::atomic<int64_t> refs{1};
  kiln_runtime* runtime;
  std::unique_ptr<kiln::abi::Module> module;

 private:
  mutable std::mutex names_mutex;
  mutable std::set<std::string> names;  // node-based: the strings never move
};

namespace kiln::abi {

// A new handle (one reference) owning `m`.
inline kiln_module* new_module_handle(kiln_runtime* rt, std::unique_ptr<Module> m) {
  return new kiln_module(rt, std::move(m));
}

}  // namespace kiln::abi
