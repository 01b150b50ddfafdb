// Staging a plugin's registrations: each type struct is checked (size, name,
// callbacks, schema) and copied with its strings; a name already taken in
// the runtime or earlier in the same plugin refuses the plugin.
#include "plugin/registrar.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "guard.hpp"
#include "kiln/error.hpp"
#include "plugin/plugin_op.hpp"

namespace kiln::abi {

const char* kind_name(kiln_registration_kind kind) {
  switch (kind) {
    case KILN_REG_OP: return "op";
    case KILN_REG_LAYER: return "layer";
    case KILN_REG_OPTIMIZER: return "optimizer";
    case KILN_REG_LR_SCHEDULE: return "lr schedule";
    case KILN_REG_DATA_SOURCE: return "data source";
    case KILN_REG_TRANSFORM: return "transform";
    case KILN_REG_STRATEGY: return "strategy";
  }
  return "unknown kind";
}

namespace {

// Per type struct: its kind, its schema members and the callbacks it cannot
// do without (the first one missing, or nullptr).
template <class Type>
struct TypeInfo;

template <>
struct TypeInfo<kiln_layer_type> {
  static constexpr kiln_registration_kind kind = KILN_REG_LAYER;
  static constexpr auto specs = &kiln_layer_type::config;
  static constexpr auto n_specs = &kiln_layer_type::n_config;
  static const char* missing(const kiln_layer_type& t) { return !t.create ? "create" : !t.forward ? "forward" : nullptr; }
  static Staged<kiln_layer_type>& staged(kiln_registrar& r) { return r.layers; }
};
template <>
struct TypeInfo<kiln_optimizer_type> {
  static constexpr kiln_registration_kind kind = KILN_REG_OPTIMIZER;
  static constexpr auto specs = &kiln_optimizer_type::hyper;
  static constexpr auto n_specs = &kiln_optimizer_type::n_hyper;
  static const char* missing(const kiln_optimizer_type& t) { return !t.update ? "update" : nullptr; }
  static Staged<kiln_optimizer_type>& staged(kiln_registrar& r) { return r.optimizers; }
};
template <>
struct TypeInfo<kiln_lr_schedule_type> {
  static constexpr kiln_registration_kind kind = KILN_REG_LR_SCHEDULE;
  static constexpr auto specs = &kiln_lr_schedule_type::config;
  static constexpr auto n_specs = &kiln_lr_schedule_type::n_config;
  static const char* missing(const kiln_lr_schedule_type& t) { return !t.lr ? "lr" : nullptr; }
  static Staged<kiln_lr_schedule_type>& staged(kiln_registrar& r) { return r.lr_schedules; }
};
template <>
struct TypeInfo<kiln_data_source_type> {
  static constexpr kiln_registration_kind kind = KILN_REG_DATA_SOURCE;
  static constexpr auto specs = &kiln_data_source_type::config;
  static constexpr auto n_specs = &kiln_data_source_type::n_config;
  static const char* missing(const kiln_data_source_type& t) {
    return !t.create ? "create" : !t.length ? "length" : !t.get ? "get" : nullptr;
  }
  static Staged<kiln_data_source_type>& staged(kiln_registrar& r) { return r.data_sources; }
};
template <>
struct TypeInfo<kiln_transform_type> {
  static constexpr kiln_registration_kind kind = KILN_REG_TRANSFORM;
  static constexpr auto specs = &kiln_transform_type::config;
  static constexpr auto n_specs = &kiln_transform_type::n_config;
  static const char* missing(const kiln_transform_type& t) { return !t.create ? "create" : !t.apply ? "apply" : nullptr; }
  static Staged<kiln_transform_type>& staged(kiln_registrar& r) { return r.transforms; }
};
template <>
struct TypeInfo<kiln_strategy_type> {
  static constexpr kiln_registration_kind kind = KILN_REG_STRATEGY;
  static constexpr auto specs = &kiln_strategy_type::config;
  static constexpr auto n_specs = &kiln_strategy_type::n_config;
  static const char* missing(const kiln_strategy_type& t) {
    return !t.create ? "create" : !t.rank ? "rank" : !t.reduce_gradients ? "reduce_gradients" : nullptr;
  }
  static Staged<kiln_strategy_type>& staged(kiln_registrar& r) { return r.strategies; }
};

// The smallest struct a plugin may hand over: the size of the type as first
// published. Members added later at the end are left null for a plugin
// built before them.
template <class Type>
constexpr size_t kOldestTypeSize = sizeof(Type);
template <>
constexpr size_t kOldestTypeSize<kiln_optimizer_type> = offsetof(kiln_optimizer_type, update_group);
template <>
constexpr size_t kOldestTypeSize<kiln_strategy_type> = offsetof(kiln_strategy_type, attach);

// Throws unless `name` is free in the runtime and not yet used by this plugin.
void claim_name(kiln_registrar& r, kiln_registration_kind kind, const std::string& name) {
  const char* noun = kind_name(kind);
  const bool twice = std::any_of(r.registrations.begin(), r.registrations.end(),
                                 [&](const auto& reg) { return reg.first == kind && reg.second == name; });
  KILN_CHECK(!twice, Status::plugin_refused, noun, " '", name, "' is registered twice by plugin '", r.plugin_name, "'");
  const std::string owner = r.owner_of(kind, name);
  KILN_CHECK(owner.empty(), Status::plugin_refused, noun, " '", name, "' is already registered by ", owner);
}

template <class Type>
void stage(kiln_registrar& r, const Type* type) {
  using Info = TypeInfo<Type>;
  const char* noun = kind_name(Info::kind);
  KILN_CHECK(type, Status::invalid_argument, "the ", noun, " type is NULL");
  KILN_CHECK(type->size >= kOldestTypeSize<Type>, Status::invalid_argument, "a ", noun, " type is ", type->size,
             " bytes, at least ", kOldestTypeSize<Type>, " expected (set size to sizeof)");
  KILN_CHECK(type->name && *type->name, Status::invalid_argument, "a ", noun, " type has no name");
  const char* missing = Info::missing(*type);
  KILN_CHECK(!missing, Status::invalid_argument, noun, " '", type->name, "' has no ", missing, " function");
  claim_name(r, Info::kind, type->name);

  auto entry = std::make_shared<Registered<Type>>();
  entry->name = type->name;
  entry->schema = ConfigSchema(type->*Info::specs, type->*Info::n_specs, str_cat(noun, " '", entry->name, "'"));
  entry->plugin_name = r.plugin_name;
  entry->plugin = r.plugin;
  entry->type = Type{};
  std::memcpy(&entry->type, type, std::min(type->size, sizeof(Type)));
  entry->type.size = sizeof(Type);
  entry->type.name = entry->name.c_str();
  entry->type.*Info::specs = entry->schema.specs();
  Info::staged(r).push_back(std::move(entry));
  r.registrations.emplace_back(Info::kind, type->name);
}

void stage_op(kiln_registrar& r, const kiln_op_type* type) {
  KILN_CHECK(type, Status::invalid_argument, "the op type is NULL");
  OpDef def = make_plugin_op(*type, r.runtime, r.plugin_name, r.plugin);
  claim_name(r, KILN_REG_OP, def.name);
  r.registrations.emplace_back(KILN_REG_OP, def.name);
  r.ops.push_back(std::move(def));
}

// Runs `body`; a failure is the plugin's error (and, the first time, the
// plugin's refusal), returned as host->error would.
template <class Body>
kiln_status staged_call(kiln_registrar* r, const char* function, Body&& body) {
  if (!r) return set_error(KILN_ERR_INVALID_ARGUMENT, function, "the registrar is NULL");
  try {
    body();
    return KILN_OK;
  } catch (const Error& e) {
    if (r->refusal.empty()) r->refusal = e.what();
    return set_error(kiln_status(e.status()), function, e.what());
  } catch (...) {
    const kiln_status status = error_from_current_exception(function);
    if (r->refusal.empty()) r->refusal = kiln_last_error();
    return status;
  }
}

}  // namespace

namespace host {

kiln_status register_op(kiln_registrar* r, const kiln_op_type* type) {
  return staged_call(r, "register_op", [&] { stage_op(*r, type); });
}
kiln_status register_layer(kiln_registrar* r, const kiln_layer_type* type) {
  return staged_call(r, "register_layer", [&] { stage(*r, type); });
}
kiln_status register_optimizer(kiln_registrar* r, const kiln_optimizer_type* type) {
  return staged_call(r, "register_optimizer", [&] { stage(*r, type); });
}
kiln_status register_lr_schedule(kiln_registrar* r, const kiln_lr_schedule_type* type) {
  return staged_call(r, "register_lr_schedule", [&] { stage(*r, type); });
}
kiln_status register_data_source(kiln_registrar* r, const kiln_data_source_type* type) {
  return staged_call(r, "register_data_source", [&] { stage(*r, type); });
}
kiln_status register_transform(kiln_registrar* r, const kiln_transform_type* type) {
  return staged_call(r, "register_transform", [&] { stage(*r, type); });
}
kiln_status register_strategy(kiln_registrar* r, const kiln_strategy_type* type) {
  return staged_call(r, "register_strategy", [&] { stage(*r, type); });
}

}  // namespace host
}  // namespace kiln::abi
