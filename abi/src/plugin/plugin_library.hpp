// One load of a plugin library file: the mapped code (Boost.DLL, RTLD_LOCAL),
// the descriptor its kiln_plugin_entry returned, and the ABI version agreed
// on. A PluginRef held by every registered type and every object made from
// one keeps the code mapped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kiln/kiln_plugin.h"
#include "plugin/registry.hpp"

namespace kiln::abi {

struct MappedCode;

class PluginLibrary {
 public:
  // Maps `path`, calls its entry and negotiates the ABI. Throws
  // Status::plugin_refused with "<path>: <reason>" for a missing file, a
  // file that is not a shared library, one without kiln_plugin_entry, a
  // malformed descriptor, or no ABI version in common with this host.
  static std::shared_ptr<PluginLibrary> open(const std::string& path);
  ~PluginLibrary();

  const std::string& path() const { return path_; }
  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  uint32_t abi_version() const { return abi_version_; }
  kiln_plugin_register_fn register_fn() const { return register_fn_; }

  // A host table for registering this plugin in `rt`. It lives as long as
  // the code stays mapped: a plugin may keep the pointer in a static and use
  // it from any callback, even after another runtime loaded it again.
  const kiln_host* host_table(kiln_runtime* rt) const;

  // Throws Status::plugin_refused with "<path>: <reason>".
  [[noreturn]] void refuse(const std::string& reason) const;

 private:
  PluginLibrary() = default;

  std::shared_ptr<MappedCode> code_;
  std::string path_, name_, version_;
  uint32_t abi_version_ = 0;
  kiln_plugin_register_fn register_fn_ = nullptr;
};

// "1.0", or "1.0 to 1.3" for a range.
std::string abi_text(uint32_t min, uint32_t max);

}  // namespace kiln::abi
