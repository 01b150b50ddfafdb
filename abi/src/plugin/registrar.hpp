// Where a plugin's register_fn puts its registrations: everything is staged
// (copied and checked) here, and committed to the runtime only when the
// whole registration succeeded, so a refused plugin leaves nothing behind.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kiln/ops/op_def.hpp"
#include "plugin/registry.hpp"

namespace kiln::abi {

// "op", "layer", "optimizer", ...
const char* kind_name(kiln_registration_kind kind);

// Who already has a name of a kind in the runtime ("plugin 'x'", "the
// built-in ops"); empty when it is free.
using NameOwner = std::function<std::string(kiln_registration_kind kind, const std::string& name)>;

template <class Type>
using Staged = std::vector<std::shared_ptr<const Registered<Type>>>;

}  // namespace kiln::abi

struct kiln_registrar {
  kiln_runtime* runtime = nullptr;
  std::string plugin_name;
  kiln::abi::PluginRef plugin;
  kiln::abi::NameOwner owner_of;

  std::vector<std::pair<kiln_registration_kind, std::string>> registrations;
  std::vector<kiln::OpDef> ops;
  kiln::abi::Staged<kiln_layer_type> layers;
  kiln::abi::Staged<kiln_optimizer_type> optimizers;
  kiln::abi::Staged<kiln_lr_schedule_type> lr_schedules;
  kiln::abi::Staged<kiln_data_source_type> data_sources;
  kiln::abi::Staged<kiln_transform_type> transforms;
  kiln::abi::Staged<kiln_strategy_type> strategies;
  // The first registration refused (a taken name, a malformed type): it
  // refuses the plugin even if register_fn goes on and reports success.
  std::string refusal;
};

namespace kiln::abi::host {

kiln_status register_op(kiln_registrar* r, const kiln_op_type* type);
kiln_status register_layer(kiln_registrar* r, const kiln_layer_type* type);
kiln_status register_optimizer(kiln_registrar* r, const kiln_optimizer_type* type);
kiln_status register_lr_schedule(kiln_registrar* r, const kiln_lr_schedule_type* type);
kiln_status register_data_source(kiln_registrar* r, const kiln_data_source_type* type);
kiln_status register_transform(kiln_registrar* r, const kiln_transform_type* type);
kiln_status register_strategy(kiln_registrar* r, const kiln_strategy_type* type);

}  // namespace kiln::abi::host
