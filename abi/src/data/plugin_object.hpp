// One object made by a plugin type (a data source, a transform): the
// runtime it belongs to, the registered type (which keeps the plugin's code
// loaded), its checked configuration and the plugin's state. The state is
// destroyed before the type and the runtime are let go.
#pragma once

#include <memory>
#include <string>

#include "handles.hpp"
#include "kiln/kiln.h"
#include "plugin/config.hpp"
#include "plugin/registry.hpp"

namespace kiln::abi {

// The plugin host of `rt`: where data source and transform types are found.
const PluginHost& plugin_host(const kiln_runtime* rt);

// Throws the error a plugin callback just reported (through host->error),
// with the status it returned and `what` ("data source 'idx'") in front.
[[noreturn]] void throw_plugin_error(kiln_status status, const std::string& what);

// A reference on a runtime, dropped when this goes.
class RuntimeRef {
 public:
  explicit RuntimeRef(kiln_runtime* rt) : rt_(rt) { kiln_runtime_retain(rt); }
  ~RuntimeRef() { kiln_runtime_release(rt_); }
  RuntimeRef(const RuntimeRef&) = delete;
  RuntimeRef& operator=(const RuntimeRef&) = delete;
  kiln_runtime* get() const { return rt_; }

 private:
  kiln_runtime* rt_;
};

// Entry is DataSourceEntry or TransformEntry: both types have
// create(user, runtime, config, n_config, &state) and destroy(state).
template <class Entry>
class PluginObject {
 public:
  // `kind` names the kind of object in messages ("data source").
  PluginObject(kiln_runtime* rt, std::shared_ptr<const Entry> entry, const kiln_attr* config, size_t n_config,
               const char* kind)
      : runtime_(rt),
        entry_(std::move(entry)),
        config_(entry_->schema.make(config, n_config)),
        what_(std::string(kind) + " '" + entry_->name + "' (plugin " + entry_->plugin_name + ")") {
    check(entry_->type.create(entry_->type.user, rt, config_.data(), config_.size(), &state_));
  }
  ~PluginObject() {
    if (entry_->type.destroy) entry_->type.destroy(state_);
  }
  PluginObject(const PluginObject&) = delete;
  PluginObject& operator=(const PluginObject&) = delete;

  const auto& type() const { return entry_->type; }
  void* state() const { return state_; }
  kiln_runtime* runtime() const { return runtime_.get(); }

  // Turns a callback's failure into an exception naming this object.
  void check(kiln_status status) const {
    if (status != KILN_OK) throw_plugin_error(status, what_);
  }

 private:
  RuntimeRef runtime_;  // first in, last out: the state may hold tensors of the runtime
  std::shared_ptr<const Entry> entry_;
  Config config_;
  std::string what_;
  void* state_ = nullptr;
};

}  // namespace kiln::abi
