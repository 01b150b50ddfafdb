// Loading a training state checks everything before it changes anything:
// the file, its metadata, the model's tensors (read into host memory) and
// the trainer's shape (groups, batches per epoch); then the optimizer's
// state (which loads all or nothing itself), the model, and the position.
#include <optional>
#include <string_view>

#include "checkpoint/module_state.hpp"
#include "checkpoint/optimizer_shards.hpp"
#include "checkpoint/plugin_manifest.hpp"
#include "checkpoint/state_metadata.hpp"
#include "checkpoint/training_state.hpp"
#include "handles.hpp"
#include "kiln/error.hpp"
#include "kiln/util/str_cat.hpp"
#include "train/trainer.hpp"

namespace kiln::train {
namespace {

namespace keys = abi::state_keys;

// What the metadata says about where training stood.
struct SavedPosition {
  TrainState state;
  int64_t batches_per_epoch = 0;
  GeneratorState rng;
  std::vector<double> lrs, base_lrs;
  std::optional<LossScaleState> loss_scale;  // absent: saved without loss scaling
};

void check_format(const abi::StateMetadata& meta, const std::string& path) {
  const std::string* format = meta.find(keys::kFormat);
  KILN_CHECK(format, Status::io, "'", path, "' is not a kiln training state (its metadata has no '", keys::kFormat,
             "'); a file of weights loads with kiln_weights_load");
  KILN_CHECK(*format == keys::kFormatValue, Status::io, "'", path, "' is a training state of format '", *format,
             "'; this kiln reads '", keys::kFormatValue, "'");
}

SavedPosition read_position(const abi::StateMetadata& meta) {
  SavedPosition p;
  p.state.step = meta.count(keys::kStep);
  p.state.epoch = meta.count(keys::kEpoch);
  p.state.epoch_started = meta.count(keys::kEpochStarted) != 0;
  p.state.epoch_step = meta.count(keys::kEpochStep);
  p.state.epoch_batches = meta.count(keys::kEpochBatches);
  p.state.epoch_samples = meta.count(keys::kEpochSamples);
  p.state.updates = meta.find(keys::kUpdates) ? meta.count(keys::kUpdates) : p.state.step;
  if (meta.find(keys::kLossScale)) {
    p.loss_scale = LossScaleState{meta.positive(keys::kLossScale), meta.count(keys::kLossScaleCleanSteps)};
  }
  p.batches_per_epoch = meta.count(keys::kBatchesPerEpoch);
  p.rng = {meta.u64(keys::kRngSeed), meta.u64(keys::kRngOffset)};
  const int64_t groups = meta.count(keys::kGroups);
  for (int64_t g = 0; g < groups; ++g) {
    p.lrs.push_back(meta.number(keys::group_key(size_t(g), "lr")));
    p.base_lrs.push_back(meta.number(keys::group_key(size_t(g), "base_lr")));
  }
  return p;
}

void check_fits(const kiln_trainer& t, const SavedPosition& p, const std::string& path) {
  KILN_CHECK(p.lrs.size() == t.base_lrs.size(), Status::invalid_argument, "'", path, "' was saved from an optimizer with ",
             p.lrs.size(), " parameter group(s); this trainer's has ", t.base_lrs.size());
  KILN_CHECK(p.batches_per_epoch == t.batches_per_epoch, Status::invalid_argument, "'", path,
             "' was saved with a train loader of ", p.batches_per_epoch,
             " batch(es) per epoch; this trainer's has ", t.batches_per_epoch,
             " (resuming needs the same data, batch size and shard)");
  KILN_CHECK(p.state.epoch_batches <= p.batches_per_epoch, Status::io, "'", path, "': metadata says ",
             p.state.epoch_batches, " batch(es) of an epoch of ", p.batches_per_epoch, " were taken");
}

// The file's "optimizer.<entry>" tensors, read into host memory.
struct OptimizerEntries {
  std::vector<std::string> names;
  std::vector<abi::TensorRef> tensors;
};

// Under a strategy that shards the optimizer's state, only the entries of
// the parameters this rank owns.
OptimizerEntries read_optimizer_entries(const kiln_trainer& t, const checkpoint::SafetensorsReader& file) {
  kiln_runtime* rt = t.config.runtime.get();
  const std::vector<int> owners = optimizer_state_owners(t);
  OptimizerEntries out;
  for (const checkpoint::TensorEntry& e : file.header().tensors) {
    if (!e.name.starts_with(keys::kOptimizer)) continue;
    std::string name = e.name.substr(keys::kOptimizer.size());
    if (!keeps_entry(t, owners, name)) continue;
    out.names.push_back(std::move(name));
    out.tensors.push_back(abi::TensorRef::adopt(abi::new_handle(rt, abi::read_entry(rt->runtime, file, e))));
  }
  return out;
}

void load_optimizer_state(kiln_optimizer* opt, const OptimizerEntries& entries, const std::string& path) {
  std::vector<const char*> names;
  std::vector<kiln_tensor*> tensors;
  for (size_t i = 0; i < entries.names.size(); ++i) {
    names.push_back(entries.names[i].c_str());
    tensors.push_back(entries.tensors[i].get());
  }
  check_call(kiln_optimizer_state_load(opt, names.data(), tensors.data(), names.size()),
             str_cat("loading the optimizer's state from '", path, "'"));
}

// Plugins the file names that are missing here or of another version: the
// model may still load, so these are warnings, not errors.
void warn_about_plugins(kiln_runtime* rt, const checkpoint::Metadata& metadata, const std::string& path) {
  const abi::PluginVersions loaded = abi::loaded_plugins(rt);
  for (const auto& [key, version] : metadata) {
    if (!key.starts_with(keys::kPluginPrefix)) continue;
    const std::string name = key.substr(keys::kPluginPrefix.size());
    const auto it = loaded.find(name);
    if (it == loaded.end())
      rt->log.write(KILN_LOG_WARNING, str_cat("'", path, "' was saved with plugin '", name, "' ", version,
                                              ", which is not loaded"));
    else if (it->second != version)
      rt->log.write(KILN_LOG_WARNING, str_cat("'", path, "' was saved with plugin '", name, "' ", version,
                                              "; version ", it->second, " is loaded"));
  }
}

void restore_position(kiln_trainer& t, const SavedPosition& p) {
  kiln_runtime* rt = t.config.runtime.get();
  for (size_t g = 0; g < p.lrs.size(); ++g)
    check_call(kiln_optimizer_set_hyper(t.config.optimizer.get(), g, "lr", p.lrs[g]), "restoring the learning rates");
  t.base_lrs = p.base_lrs;
  rt->runtime.set_generator_state(p.rng);
  if (p.state.epoch_started)
    check_call(kiln_loader_start_epoch_at(t.config.train.get(), p.state.epoch, p.state.epoch_batches),
               "resuming the train loader");
  TrainState& s = t.state;
  // A file saved without loss scaling starts this trainer's scale afresh;
  // one saved with it restores the scale only where scaling is on.
  const LossScaleConfig& scaling = t.config.loss_scale;
  const LossScaleState scale = p.loss_scale && scaling.enabled ? *p.loss_scale : initial_loss_scale(scaling);
  s = p.state;
  s.loss_scale = scale;
  s.epoch_seconds = 0.0;
  s.stop_requested = false;
  s.last_step = kiln_step_metrics{};
}

}  // namespace

void load_training_state(kiln_trainer& t, const std::string& path) {
  kiln_runtime* rt = t.config.runtime.get();
  const checkpoint::SafetensorsReader file(path);
  const abi::StateMetadata meta(file.header().metadata, path);
  check_format(meta, path);
  const SavedPosition position = read_position(meta);
  check_fits(t, position, path);
  const auto model = abi::plan_assignments(rt->runtime, file, abi::module_state(t.config.model.get()), keys::kModel,
                                           true, "the trainer's model");
  load_optimizer_state(t.config.optimizer.get(), read_optimizer_entries(t, file), path);
  abi::apply_assignments(rt->runtime, model);
  restore_position(t, position);
  warn_about_plugins(rt, file.header().metadata, path);
}

}  // namespace kiln::train
