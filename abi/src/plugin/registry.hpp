// The plugin host of one runtime: the plugins it loaded and what each
// registered (layer types, optimizers, schedules, data sources, transforms,
// strategies; ops go into the runtime's op table). Every registered type
// keeps a reference on its library, and so does every object made from it,
// so a library is closed only when nothing of it is alive.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/kiln_plugin.h"
#include "plugin/config.hpp"

namespace kiln::abi {

// A loaded plugin library; closed when the last reference goes.
class PluginLibrary;
using PluginRef = std::shared_ptr<const PluginLibrary>;

// A type struct copied out of a plugin at registration, with its schema.
template <class Type>
struct Registered {
  Type type{};          // the plugin's struct; its name and schema pointers point into `name` and `schema`
  std::string name;
  ConfigSchema schema;
  std::string plugin_name;
  PluginRef plugin;     // keeps the code of the callbacks loaded
};

using LayerEntry = Registered<kiln_layer_type>;
using OptimizerEntry = Registered<kiln_optimizer_type>;
using LrScheduleEntry = Registered<kiln_lr_schedule_type>;
using DataSourceEntry = Registered<kiln_data_source_type>;
using TransformEntry = Registered<kiln_transform_type>;
using StrategyEntry = Registered<kiln_strategy_type>;

// What `kiln_plugin_info` and `kiln plugins` show of one plugin.
struct PluginRecord {
  std::string name, version, path;
  uint32_t abi_version = 0;
  std::vector<std::pair<kiln_registration_kind, std::string>> registrations;
  PluginRef library;
};

class PluginHost {
 public:
  explicit PluginHost(kiln_runtime* owner);
  ~PluginHost();

  // The types registered under `name`; throws Status::not_found naming the
  // kind, the name and the close matches.
  std::shared_ptr<const LayerEntry> layer(std::string_view name) const;
  std::shared_ptr<const OptimizerEntry> optimizer(std::string_view name) const;
  std::shared_ptr<const LrScheduleEntry> lr_schedule(std::string_view name) const;
  std::shared_ptr<const DataSourceEntry> data_source(std::string_view name) const;
  std::shared_ptr<const TransformEntry> transform(std::string_view name) const;
  std::shared_ptr<const StrategyEntry> strategy(std::string_view name) const;

  // Loads one library; throws Status::plugin_refused naming the file and
  // the reason, leaving nothing of it registered.
  void load(const std::string& path);
  // Loads what the runtime options and the environment name (see
  // kiln_runtime_options); refusals are logged, not thrown.
  void load_defaults(const kiln_runtime_options* options);
  void unload(std::string_view name);

  std::vector<PluginRecord> plugins() const;  // a snapshot, in load order
  const PluginRecord& plugin(size_t index) const;
  size_t plugin_count() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kiln::abi
