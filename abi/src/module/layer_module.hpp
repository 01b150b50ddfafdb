// A layer of a plugin's type: the plugin's state, its configuration, and the
// parameters, buffers and sub-layers its create added. It holds the type's
// registry entry, which keeps the plugin's code loaded until the state has
// been destroyed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "module/module.hpp"
#include "plugin/config.hpp"
#include "plugin/registry.hpp"

namespace kiln::abi {
class LayerModule;
}

// Where a layer's create adds what it made (see kiln_host::layer_add_*).
struct kiln_layer_init {
  kiln_runtime* runtime;
  kiln::abi::LayerModule* module;
};

namespace kiln::abi {

class LayerModule final : public Module {
 public:
  // Finds the type, checks and completes `config` and calls the plugin's
  // create; a failure is thrown as "layer '<type>': <reason>".
  static std::unique_ptr<LayerModule> create(kiln_runtime* rt, const char* type, const kiln_attr* config,
                                             size_t n_config);
  ~LayerModule() override;

  const std::string& type() const override { return entry_->name; }
  std::vector<TensorRef> forward(std::span<kiln_tensor* const> inputs) override;
  std::span<const NamedTensor> parameters() const override { return parameters_; }
  std::span<const NamedTensor> buffers() const override { return buffers_; }
  std::span<const ModuleChild> children() const override { return children_; }

  // What the plugin adds during create; names are unique within the layer.
  void add_parameter(const char* name, kiln_tensor* t);
  void add_buffer(const char* name, kiln_tensor* t);
  void add_child(const char* name, kiln_module* child);

 private:
  LayerModule(kiln_runtime* rt, std::shared_ptr<const LayerEntry> entry, Config config);
  // The checked name for a new parameter, buffer or child.
  std::string new_name(const char* name, const char* what) const;

  // Declared first, so it goes last: the plugin's code must stay loaded
  // until the state and everything it made are gone.
  std::shared_ptr<const LayerEntry> entry_;
  Config config_;
  void* state_ = nullptr;  // set once create succeeded
  std::vector<NamedTensor> parameters_;
  std::vector<NamedTensor> buffers_;
  std::vector<ModuleChild> children_;
};

}  // namespace kiln::abi
