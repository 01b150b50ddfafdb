// Small defaults for the required configuration entries of a layer type,
// read from the schema its plugin declared (kiln_registration_config_*):
// 4 for an int, {4} for a list of ints, 0.5 for a float, false for a bool;
// 4 keeps every size in agreement (features, channels, heads, kernel sizes)
// with the inputs plugin-check tries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::cli {

class LayerConfig {
 public:
  // The required entries of layer `type` with small values, or nullopt with
  // *why set when the schema cannot be read or an entry has no small default.
  static std::optional<LayerConfig> for_layer(kiln_runtime* rt, const std::string& type, std::string* why);

  // attrs_ point into the strings of names_, which a move leaves in place
  // and a copy would not.
  LayerConfig() = default;
  LayerConfig(LayerConfig&&) = default;
  LayerConfig& operator=(LayerConfig&&) = default;
  LayerConfig(const LayerConfig&) = delete;
  LayerConfig& operator=(const LayerConfig&) = delete;

  const kiln_attr* data() const { return attrs_.data(); }
  size_t size() const { return attrs_.size(); }
  // "in_features=4, kernel_size={4}" for the report.
  const std::string& description() const { return description_; }

 private:
  std::vector<std::string> names_;
  std::vector<kiln_attr> attrs_;
  std::string description_;
};

}  // namespace kiln::cli
