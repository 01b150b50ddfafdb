// Plugins through the C API: loading by path, unloading by name, and what
// each loaded plugin registered.
#include "convert.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "plugin/registrar.hpp"

using kiln::abi::guarded;

namespace {

// The schema of the type `name` of `kind`; it lives as long as the type's registration.
const kiln::abi::ConfigSchema& schema_of(const kiln_runtime& rt, kiln_registration_kind kind, const char* name) {
  const kiln::abi::PluginHost& host = rt.plugins;
  switch (kind) {
    case KILN_REG_LAYER: return host.layer(name)->schema;
    case KILN_REG_OPTIMIZER: return host.optimizer(name)->schema;
    case KILN_REG_LR_SCHEDULE: return host.lr_schedule(name)->schema;
    case KILN_REG_DATA_SOURCE: return host.data_source(name)->schema;
    case KILN_REG_TRANSFORM: return host.transform(name)->schema;
    case KILN_REG_STRATEGY: return host.strategy(name)->schema;
    case KILN_REG_OP:
      kiln::throw_error(kiln::Status::unsupported, kiln::str_cat("op '", name,
                                                                 "': ops have attributes, not a configuration schema"));
  }
  kiln::throw_error(kiln::Status::invalid_argument, kiln::str_cat("unknown registration kind ", int(kind)));
}

}  // namespace

extern "C" {

const char* kiln_registration_kind_name(kiln_registration_kind kind) { return kiln::abi::kind_name(kind); }

kiln_status kiln_plugin_load(kiln_runtime* rt, const char* path) {
  KILN_REQUIRE(rt, path);
  return guarded(__func__, [&] { rt->plugins.load(path); });
}

kiln_status kiln_plugin_unload(kiln_runtime* rt, const char* name) {
  KILN_REQUIRE(rt, name);
  return guarded(__func__, [&] { rt->plugins.unload(name); });
}

kiln_status kiln_plugin_count(kiln_runtime* rt, size_t* out) {
  KILN_REQUIRE(rt, out);
  *out = rt->plugins.plugin_count();
  return KILN_OK;
}

kiln_status kiln_plugin_info_get(kiln_runtime* rt, size_t plugin, kiln_plugin_info* out) {
  KILN_REQUIRE(rt, out);
  return guarded(__func__, [&] {
    kiln::abi::check_struct_size(out->size, "kiln_plugin_info");
    const kiln::abi::PluginRecord& r = rt->plugins.plugin(plugin);
    if (KILN_HAS_FIELD(out, name)) out->name = r.name.c_str();
    if (KILN_HAS_FIELD(out, version)) out->version = r.version.c_str();
    if (KILN_HAS_FIELD(out, path)) out->path = r.path.c_str();
    if (KILN_HAS_FIELD(out, abi_version)) out->abi_version = r.abi_version;
    if (KILN_HAS_FIELD(out, num_registrations)) out->num_registrations = r.registrations.size();
  });
}

kiln_status kiln_plugin_registration(kiln_runtime* rt, size_t plugin, size_t index, kiln_registration_kind* kind,
                                     const char** name) {
  KILN_REQUIRE(rt, kind, name);
  return guarded(__func__, [&] {
    const kiln::abi::PluginRecord& r = rt->plugins.plugin(plugin);
    KILN_CHECK(index < r.registrations.size(), kiln::Status::invalid_argument, "registration index ", index,
               " is out of range (plugin '", r.name, "' has ", r.registrations.size(), ")");
    *kind = r.registrations[index].first;
    *name = r.registrations[index].second.c_str();
  });
}

kiln_status kiln_registration_config_count(kiln_runtime* rt, kiln_registration_kind kind, const char* name,
                                           size_t* count) {
  KILN_REQUIRE(rt, name, count);
  return guarded(__func__, [&] { *count = schema_of(*rt, kind, name).size(); });
}

kiln_status kiln_registration_config_entry(kiln_runtime* rt, kiln_registration_kind kind, const char* name,
                                           size_t index, kiln_attr* entry, int* required, const char** doc) {
  KILN_REQUIRE(rt, name, entry, required, doc);
  return guarded(__func__, [&] {
    const kiln::abi::ConfigSchema& schema = schema_of(*rt, kind, name);
    KILN_CHECK(index < schema.size(), kiln::Status::invalid_argument, "entry index ", index, " is out of range (",
               schema.owner(), " has ", schema.size(), ")");
    const kiln_attr_spec& spec = schema.specs()[index];
    *entry = spec.attr;
    *required = spec.required;
    *doc = spec.doc ? spec.doc : "";
  });
}

}  // extern "C"
