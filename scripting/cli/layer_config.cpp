#include "layer_config.hpp"

namespace kiln::cli {
namespace {

constexpr int64_t kSmallSize = 4;
constexpr double kSmallFloat = 0.5;
// One element for a list of ints: the same storage for every entry.
const int64_t kSmallSizes[1] = {kSmallSize};

}  // namespace

std::optional<LayerConfig> LayerConfig::for_layer(kiln_runtime* rt, const std::string& type, std::string* why) {
  size_t count = 0;
  if (kiln_registration_config_count(rt, KILN_REG_LAYER, type.c_str(), &count) != KILN_OK) {
    *why = std::string("its configuration schema cannot be read: ") + kiln_last_error();
    return std::nullopt;
  }
  LayerConfig config;
  std::vector<kiln_attr_type> types;
  for (size_t i = 0; i < count; ++i) {
    kiln_attr entry;
    int required = 0;
    const char* doc = nullptr;
    if (kiln_registration_config_entry(rt, KILN_REG_LAYER, type.c_str(), i, &entry, &required, &doc) != KILN_OK) {
      *why = std::string("its configuration schema cannot be read: ") + kiln_last_error();
      return std::nullopt;
    }
    if (!required) continue;
    config.names_.emplace_back(entry.name);
    types.push_back(entry.type);
  }
  for (size_t i = 0; i < types.size(); ++i) {
    const char* name = config.names_[i].c_str();
    std::string value;
    if (types[i] == KILN_ATTR_INT) {
      config.attrs_.push_back(kiln_attr_int(name, kSmallSize));
      value = std::to_string(kSmallSize);
    } else if (types[i] == KILN_ATTR_INTS) {
      config.attrs_.push_back(kiln_attr_ints(name, kSmallSizes, 1));
      value = "{" + std::to_string(kSmallSize) + "}";
    } else if (types[i] == KILN_ATTR_FLOAT) {
      config.attrs_.push_back(kiln_attr_float(name, kSmallFloat));
      value = "0.5";
    } else if (types[i] == KILN_ATTR_BOOL) {
      config.attrs_.push_back(kiln_attr_bool(name, 0));
      value = "false";
    } else {
      *why = "required entry '" + config.names_[i] + "' has no small default (int, ints, float and bool entries have)";
      return std::nullopt;
    }
    config.description_ += (i ? ", " : "") + config.names_[i] + "=" + value;
  }
  return config;
}

}  // namespace kiln::cli
