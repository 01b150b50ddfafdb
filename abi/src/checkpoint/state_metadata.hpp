// The metadata of a training state file: string keys and values, as the
// safetensors format allows, with numbers written so that they read back
// exactly (integers in decimal, doubles in their shortest round-trip form).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/checkpoint/safetensors.hpp"

namespace kiln::abi::state_keys {

// What marks a file as a kiln training state, and its layout's version.
inline constexpr std::string_view kFormat = "kiln.format";
inline constexpr std::string_view kFormatValue = "training_state/1";
inline constexpr std::string_view kVersion = "kiln.version";
inline constexpr std::string_view kPluginPrefix = "plugin.";  // "plugin.<name>" = its version

inline constexpr std::string_view kStep = "trainer.step";
inline constexpr std::string_view kEpoch = "trainer.epoch";
inline constexpr std::string_view kEpochStarted = "trainer.epoch_started";
inline constexpr std::string_view kEpochStep = "trainer.epoch_step";
inline constexpr std::string_view kEpochBatches = "trainer.epoch_batches";
inline constexpr std::string_view kEpochSamples = "trainer.epoch_samples";
// Written by every save; a file without them was saved before skipped
// steps existed, when every step updated the parameters.
inline constexpr std::string_view kUpdates = "trainer.updates";
// Written when loss scaling is on.
inline constexpr std::string_view kLossScale = "loss_scale.scale";
inline constexpr std::string_view kLossScaleCleanSteps = "loss_scale.clean_steps";
inline constexpr std::string_view kBatchesPerEpoch = "loader.batches_per_epoch";
inline constexpr std::string_view kGroups = "optimizer.groups";
inline constexpr std::string_view kRngSeed = "rng.seed";
inline constexpr std::string_view kRngOffset = "rng.offset";

// Tensor name prefixes.
inline constexpr std::string_view kModel = "model.";
inline constexpr std::string_view kOptimizer = "optimizer.";

// Per-group keys: "optimizer.group.<g>.lr" and ".base_lr".
std::string group_key(size_t group, std::string_view what);

}  // namespace kiln::abi::state_keys

namespace kiln::abi {

std::string format_number(int64_t v);
std::string format_number(uint64_t v);
std::string format_number(double v);

// Reads the metadata of a training state file, each failure naming the
// file and the key.
class StateMetadata {
 public:
  StateMetadata(const checkpoint::Metadata& metadata, std::string path);

  // The value of `key`, or nullptr when absent.
  const std::string* find(std::string_view key) const;
  const std::string& text(std::string_view key) const;  // throws when absent
  int64_t count(std::string_view key) const;            // an integer >= 0
  uint64_t u64(std::string_view key) const;
  double number(std::string_view key) const;  // finite
  double positive(std::string_view key) const;  // finite and > 0

 private:
  const checkpoint::Metadata& metadata_;
  std::string path_;
};

}  // namespace kiln::abi
