#include "checkpoint/module_state.hpp"
#include "checkpoint/optimizer_shards.hpp"
#include "checkpoint/plugin_manifest.hpp"
#include "checkpoint/state_metadata.hpp"
#include "checkpoint/training_state.hpp"
#include "handles.hpp"
#include "kiln/util/str_cat.hpp"
#include "train/rank_agreement.hpp"
#include "train/trainer.hpp"

namespace kiln::train {
namespace {

using abi::format_number;
namespace keys = abi::state_keys;

// This rank's optimizer state, and under a strategy that shards it the
// state the other ranks own (`gathered`): the whole state either way.
void add_optimizer_state(const kiln_trainer& t, const std::vector<int>& owners, abi::StateTensors gathered,
                         abi::StateTensors& tensors) {
  kiln_optimizer* opt = t.config.optimizer.get();
  size_t n = 0;
  check_call(kiln_optimizer_state_count(opt, &n), "listing the optimizer's state");
  for (size_t i = 0; i < n; ++i) {
    const char* name = nullptr;
    kiln_tensor* entry = nullptr;
    check_call(kiln_optimizer_state_get(opt, i, &name, &entry), "listing the optimizer's state");
    const TensorRef owned = TensorRef::adopt(entry);
    if (keeps_entry(t, owners, name)) tensors.push_back({str_cat(keys::kOptimizer, name), owned->tensor});
  }
  for (abi::StateTensor& g : gathered) tensors.push_back({str_cat(keys::kOptimizer, g.name), std::move(g.tensor)});
}

// The kiln version and every loaded plugin with its version: what made the file.
void add_manifest(kiln_runtime* rt, checkpoint::Metadata& m) {
  m.emplace_back(keys::kVersion, kiln_version());
  for (const auto& [name, version] : abi::loaded_plugins(rt)) m.emplace_back(str_cat(keys::kPluginPrefix, name), version);
}

void add_groups(const kiln_trainer& t, checkpoint::Metadata& m) {
  kiln_optimizer* opt = t.config.optimizer.get();
  m.emplace_back(keys::kGroups, format_number(uint64_t(t.base_lrs.size())));
  for (size_t g = 0; g < t.base_lrs.size(); ++g) {
    double lr = 0.0;
    check_call(kiln_optimizer_get_hyper(opt, g, "lr", &lr), "reading the learning rates");
    m.emplace_back(keys::group_key(g, "lr"), format_number(lr));
    m.emplace_back(keys::group_key(g, "base_lr"), format_number(t.base_lrs[g]));
  }
}

}  // namespace

void save_training_state(kiln_trainer& t, const std::string& path) {
  kiln_runtime* rt = t.config.runtime.get();
  if (t.world_size > 1) {
    // Data parallel: the ranks hold the same state (but for a sharded
    // optimizer's, which rank 0 gathers), and rank 0 writes it once they
    // have shown they agree on where training stands.
    const TrainState& s = t.state;
    const RankValue at[] = {{"step", s.step}, {"epoch", s.epoch}, {"batch of the epoch", s.epoch_batches}};
    check_ranks_agree(rt, str_cat("saving the training state to ", path), at);
  }
  const std::vector<int> owners = optimizer_state_owners(t);
  abi::StateTensors gathered = gather_owned_state(t, owners);
  if (t.rank != 0) return;
  abi::StateTensors tensors;
  for (const abi::StateTensor& s : abi::module_state(t.config.model.get()))
    tensors.push_back({str_cat(keys::kModel, s.name), s.tensor});
  add_optimizer_state(t, owners, std::move(gathered), tensors);

  const TrainState& s = t.state;
  const GeneratorState rng = rt->runtime.generator_state();
  checkpoint::Metadata m{{std::string(keys::kFormat), std::string(keys::kFormatValue)}};
  add_manifest(rt, m);
  m.emplace_back(keys::kStep, format_number(s.step));
  m.emplace_back(keys::kEpoch, format_number(s.epoch));
  m.emplace_back(keys::kEpochStarted, s.epoch_started ? "1" : "0");
  m.emplace_back(keys::kEpochStep, format_number(s.epoch_step));
  m.emplace_back(keys::kEpochBatches, format_number(s.epoch_batches));
  m.emplace_back(keys::kEpochSamples, format_number(s.epoch_samples));
  m.emplace_back(keys::kUpdates, format_number(s.updates));
  if (t.config.loss_scale.enabled) {
    m.emplace_back(keys::kLossScale, format_number(s.loss_scale.scale));
    m.emplace_back(keys::kLossScaleCleanSteps, format_number(s.loss_scale.clean_steps));
  }
  m.emplace_back(keys::kBatchesPerEpoch, format_number(t.batches_per_epoch));
  m.emplace_back(keys::kRngSeed, format_number(rng.seed));
  m.emplace_back(keys::kRngOffset, format_number(rng.offset));
  add_groups(t, m);
  abi::save_named_tensors(rt->runtime, path, tensors, m);
}

}  // namespace kiln::train
