// One object made by a plugin type that is created in a runtime from a
// configuration (a data source, a transform, a strategy): the runtime it
// belongs to, the registered type (which keeps the plugin's code loaded),
// its checked configuration and the plugin's state. The state is destroyed
// before the type and the runtime are let go.
#pragma once

#include <memory>
#include <string>

#include "handle_ref.hpp"
#include "handles.hpp"
#include "plugin/config.hpp"
#include "plugin/plugin_call.hpp"
#include "plugin/registry.hpp"

namespace kiln::abi {

// Entry is DataSourceEntry, TransformEntry or StrategyEntry: each type has
// create(user, runtime, config, n_config, &state) and destroy(state).
template <class Entry>
class PluginObject {
 public:
  // `kind` names the kind of object in messages ("data source").
  PluginObject(kiln_runtime* rt, std::shared_ptr<const Entry> entry, const kiln_attr* config, size_t n_config,
               const char* kind)
      : runtime_(RuntimeRef::retain(rt)),
        entry_(std::move(entry)),
        config_(entry_->schema.make(config, n_config)),
        what_(describe_registered(kind, entry_->name, entry_->plugin_name)) {
    check(entry_->type.create(entry_->type.user, rt, config_.data(), config_.size(), &state_));
  }
  ~PluginObject() {
    if (state_ && entry_->type.destroy) entry_->type.destroy(state_);
  }
  PluginObject(const PluginObject&) = delete;
  PluginObject& operator=(const PluginObject&) = delete;

  const auto& type() const { return entry_->type; }
  const Entry& entry() const { return *entry_; }
  void* state() const { return state_; }
  kiln_runtime* runtime() const { return runtime_.get(); }

  // Turns a callback's failure into an exception naming this object.
  void check(kiln_status status) const { check_plugin_call(status, what_); }

 private:
  RuntimeRef runtime_;  // first in, last out: the state may hold tensors of the runtime
  std::shared_ptr<const Entry> entry_;
  Config config_;
  std::string what_;
  void* state_ = nullptr;
};

}  // namespace kiln::abi
