// The plugin host of one runtime: loading (open, negotiate, stage, commit),
// the tables of registered types per kind, lookups and unloading.
#include "plugin/registry.hpp"

#include <algorithm>

#include "handles.hpp"
#include "kiln/error.hpp"
#include "plugin/plugin_library.hpp"
#include "plugin/plugin_op.hpp"
#include "plugin/plugin_search.hpp"
#include "plugin/registrar.hpp"

namespace kiln::abi {
namespace {

template <class Type>
using Table = std::map<std::string, std::shared_ptr<const Registered<Type>>, std::less<>>;

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

template <class Type>
std::shared_ptr<const Registered<Type>> find_in(const Table<Type>& table, kiln_registration_kind kind,
                                                std::string_view name) {
  auto it = table.find(name);
  if (it != table.end()) return it->second;
  std::vector<std::string> names;
  for (const auto& [n, entry] : table) names.push_back(n);
  const std::string hint = close_matches(name, names);
  throw_error(Status::not_found,
              str_cat("unknown ", kind_name(kind), " '", name, "'",
                      !hint.empty()    ? hint
                      : names.empty() ? str_cat("; no ", kind_name(kind), " is registered (is its plugin loaded?)")
                                       : str_cat("; registered: ", join(names))));
}

template <class Type>
void commit_into(Table<Type>& table, const Staged<Type>& staged) {
  for (const auto& entry : staged) table.emplace(entry->name, entry);
}

template <class Type>
void erase_plugin(Table<Type>& table, const std::string& plugin) {
  std::erase_if(table, [&](const auto& item) { return item.second->plugin_name == plugin; });
}

}  // namespace

struct PluginHost::State {
  kiln_runtime* owner;
  std::mutex load_mutex;  // one load or unload at a time
  mutable std::mutex mutex;  // guards what follows
  // Records stay where they are while others come and go: kiln_plugin_info
  // hands out pointers to their strings.
  std::vector<std::unique_ptr<PluginRecord>> records;
  Table<kiln_layer_type> layers;
  Table<kiln_optimizer_type> optimizers;
  Table<kiln_lr_schedule_type> lr_schedules;
  Table<kiln_data_source_type> data_sources;
  Table<kiln_transform_type> transforms;
  Table<kiln_strategy_type> strategies;

  const PluginRecord* record(std::string_view name) const {
    auto it = std::find_if(records.begin(), records.end(), [&](const auto& r) { return r->name == name; });
    return it == records.end() ? nullptr : it->get();
  }

  template <class Type>
  static std::string owner_in(const Table<Type>& table, const std::string& name) {
    auto it = table.find(name);
    return it == table.end() ? std::string() : str_cat("plugin '", it->second->plugin_name, "'");
  }

  // Who has `name` of `kind` in this runtime; empty when it is free.
  std::string owner_of(kiln_registration_kind kind, const std::string& name) const {
    std::lock_guard lock(mutex);
    switch (kind) {
      case KILN_REG_OP: {
        const OpDef* op = owner->runtime.registry().find(name);
        if (!op) return {};
        const std::string* plugin = plugin_of_op(*op);
        return plugin ? str_cat("plugin '", *plugin, "'") : std::string("kiln (a built-in op)");
      }
      case KILN_REG_LAYER: return owner_in(layers, name);
      case KILN_REG_OPTIMIZER: return owner_in(optimizers, name);
      case KILN_REG_LR_SCHEDULE: return owner_in(lr_schedules, name);
      case KILN_REG_DATA_SOURCE: return owner_in(data_sources, name);
      case KILN_REG_TRANSFORM: return owner_in(transforms, name);
      case KILN_REG_STRATEGY: return owner_in(strategies, name);
    }
    return {};
  }

  // Loads `path`. A plugin whose name is loaded already is refused, or
  // skipped (returning false) when `skip_loaded`.
  bool load(const std::string& path, bool skip_loaded) {
    std::lock_guard load_lock(load_mutex);
    const std::shared_ptr<PluginLibrary> library = PluginLibrary::open(path);
    {
      std::lock_guard lock(mutex);
      if (const PluginRecord* loaded = record(library->name())) {
        if (skip_loaded) {
          owner->log.write(KILN_LOG_DEBUG, str_cat("skipping ", path, ": plugin '", library->name(),
                                                   "' is already loaded from ", loaded->path));
          return false;
        }
        library->refuse(str_cat("a plugin named '", library->name(), "' is already loaded (from ", loaded->path, ")"));
      }
    }
    kiln_registrar registrar;
    registrar.runtime = owner;
    registrar.plugin_name = library->name();
    registrar.plugin = library;
    registrar.owner_of = [this](kiln_registration_kind kind, const std::string& name) { return owner_of(kind, name); };
    kiln_status status = KILN_ERR_INTERNAL;
    try {
      status = library->register_fn()(library->host_table(owner), &registrar);
    } catch (...) {
      library->refuse("registration failed: register_fn threw an exception (plugin callbacks must catch their own)");
    }
    if (!registrar.refusal.empty()) library->refuse(registrar.refusal);
    if (status != KILN_OK) library->refuse(str_cat("registration failed: ", kiln_last_error()));
    commit(registrar, library);
    owner->log.write(KILN_LOG_INFO, str_cat("loaded plugin '", library->name(), "' ", library->version(), " from ",
                                            path, " (ABI ", abi_text(library->abi_version(), library->abi_version()),
                                            ")"));
    return true;
  }

  // Everything staged goes in at once: the names were checked while staging,
  // and loads are serialised, so nothing can clash in between.
  void commit(kiln_registrar& r, const PluginRef& library) {
    std::lock_guard lock(mutex);
    for (OpDef& def : r.ops) owner->runtime.registry().add(std::move(def));
    commit_into(layers, r.layers);
    commit_into(optimizers, r.optimizers);
    commit_into(lr_schedules, r.lr_schedules);
    commit_into(data_sources, r.data_sources);
    commit_into(transforms, r.transforms);
    commit_into(strategies, r.strategies);
    records.push_back(std::make_unique<PluginRecord>(PluginRecord{library->name(), library->version(), library->path(),
                                                                  library->abi_version(), std::move(r.registrations),
                                                                  library}));
  }
};

PluginHost::PluginHost(kiln_runtime* owner) : state_(std::make_unique<State>()) { state_->owner = owner; }

PluginHost::~PluginHost() = default;

std::shared_ptr<const LayerEntry> PluginHost::layer(std::string_view name) const {
  std::lock_guard lock(state_->mutex);
  return find_in(state_->layers, KILN_REG_LAYER, name);
}
std::shared_ptr<const OptimizerEntry> PluginHost::optimizer(std::string_view name) const {
  std::lock_guard lock(state_->mutex);
  return find_in(state_->optimizers, KILN_REG_OPTIMIZER, name);
}
std::shared_ptr<const LrScheduleEntry> PluginHost::lr_schedule(std::string_view name) const {
  std::lock_guard lock(state_->mutex);
  return find_in(state_->lr_schedules, KILN_REG_LR_SCHEDULE, name);
}
std::shared_ptr<const DataSourceEntry> PluginHost::data_source(std::string_view name) const {
  std::lock_guard lock(state_->mutex);
  return find_in(state_->data_sources, KILN_REG_DATA_SOURCE, name);
}
std::shared_ptr<const TransformEntry> PluginHost::transform(std::string_view name) const {
  std::lock_guard lock(state_->mutex);
  return find_in(state_->transforms, KILN_REG_TRANSFORM, name);
}
std::shared_ptr<const StrategyEntry> PluginHost::strategy(std::string_view name) const {
  std::lock_guard lock(state_->mutex);
  return find_in(state_->strategies, KILN_REG_STRATEGY, name);
}

void PluginHost::load(const std::string& path) { state_->load(path, false); }

void PluginHost::load_defaults(const kiln_runtime_options* options) {
  for (const std::string& path : plugin_candidates(options)) {
    try {
      state_->load(path, true);
    } catch (const Error& e) {
      state_->owner->log.write(KILN_LOG_WARNING, e.what());
    }
  }
}

void PluginHost::unload(std::string_view name) {
  std::lock_guard load_lock(state_->load_mutex);
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  auto it = std::find_if(s.records.begin(), s.records.end(), [&](const auto& r) { return r->name == name; });
  if (it == s.records.end()) {
    std::vector<std::string> loaded;
    for (const auto& r : s.records) loaded.push_back(r->name);
    throw_error(Status::not_found, str_cat("no plugin named '", name, "' is loaded",
                                           loaded.empty() ? std::string(" (none is)") : "; loaded: " + join(loaded)));
  }
  // Objects made from these types hold their own references on the types
  // and on the library; the ops stay (see kiln_plugin_unload).
  const std::string& plugin = (*it)->name;
  erase_plugin(s.layers, plugin);
  erase_plugin(s.optimizers, plugin);
  erase_plugin(s.lr_schedules, plugin);
  erase_plugin(s.data_sources, plugin);
  erase_plugin(s.transforms, plugin);
  erase_plugin(s.strategies, plugin);
  s.records.erase(it);
}

std::vector<PluginRecord> PluginHost::plugins() const {
  std::lock_guard lock(state_->mutex);
  std::vector<PluginRecord> out;
  for (const auto& r : state_->records) out.push_back(*r);
  return out;
}

const PluginRecord& PluginHost::plugin(size_t index) const {
  std::lock_guard lock(state_->mutex);
  KILN_CHECK(index < state_->records.size(), Status::invalid_argument, "plugin index ", index, " is out of range (",
             state_->records.size(), " plugins are loaded)");
  return *state_->records[index];
}

size_t PluginHost::plugin_count() const {
  std::lock_guard lock(state_->mutex);
  return state_->records.size();
}

}  // namespace kiln::abi
