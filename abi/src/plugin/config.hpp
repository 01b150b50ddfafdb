// Configurations of plugin objects (a layer's, an optimizer's hyper-
// parameters, a data source's): a schema copied from the plugin, and the
// values a caller gave checked against it and completed with defaults.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/kiln_plugin.h"

namespace kiln::abi {

// kiln_attr values in schema order, owning everything they point to
// (strings, arrays; a reference on each tensor).
class Config {
 public:
  Config() = default;
  Config(const Config& other);
  Config& operator=(const Config& other);
  Config(Config&&) noexcept = default;
  Config& operator=(Config&&) noexcept = default;
  ~Config();

  const kiln_attr* data() const { return attrs_.data(); }
  size_t size() const { return attrs_.size(); }
  const kiln_attr& operator[](size_t i) const { return attrs_[i]; }
  // The entry `name`, or nullptr.
  const kiln_attr* find(std::string_view name) const;
  // Replaces the value of entry `name` (same type rules as ConfigSchema::make).
  void set(const kiln_attr& value);

 private:
  friend class ConfigSchema;
  void append(const kiln_attr& value);  // deep copy
  std::vector<kiln_attr> attrs_;
  std::vector<std::unique_ptr<char[]>> owned_;  // copies of strings and arrays
};

class ConfigSchema {
 public:
  ConfigSchema() = default;
  // Copies `specs`; `owner` names the object in messages ("layer 'Linear'").
  ConfigSchema(const kiln_attr_spec* specs, size_t n, std::string owner);
  ConfigSchema(const ConfigSchema& other);
  ConfigSchema& operator=(const ConfigSchema& other);
  ConfigSchema(ConfigSchema&&) noexcept = default;
  ConfigSchema& operator=(ConfigSchema&&) noexcept = default;

  // `given` checked and completed: an unknown name, a wrong type (an integer
  // is accepted for a float, integers for floats) or a missing required
  // entry throws invalid_argument naming the owner and the entry, and
  // listing the schema.
  Config make(const kiln_attr* given, size_t n) const;
  // Like make, over an existing configuration (an optimizer group inherits
  // the values given at creation).
  Config make(const Config& base, const kiln_attr* given, size_t n) const;

  const kiln_attr_spec* specs() const { return specs_.data(); }
  size_t size() const { return specs_.size(); }
  const std::string& owner() const { return owner_; }

 private:
  // "its entries are: lr (float, required), ..." for messages.
  std::string entry_list() const;

  // The specs point into defaults_ (names, default values) and docs_, whose
  // buffers do not move when the schema does.
  std::vector<kiln_attr_spec> specs_;
  Config defaults_;  // a placeholder of the right type for required entries
  std::vector<std::unique_ptr<char[]>> docs_;
  std::string owner_;
};

}  // namespace kiln::abi
