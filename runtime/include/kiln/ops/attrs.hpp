// Typed op attributes. An op's schema lists its attributes in order; an Attrs
// holds one value per schema entry, so kernels read them by index in O(1)
// and by name with a short scan.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "kiln/dtype.hpp"

namespace kiln {

enum class AttrType : uint8_t { integer, real, boolean, ints, reals, string, dtype };
const char* attr_type_name(AttrType t);

using AttrValue = std::variant<int64_t, double, bool, std::vector<int64_t>, std::vector<double>, std::string, DType>;

struct AttrSpec {
  std::string name;
  AttrType type;
  AttrValue default_value;  // used when the caller gives none
  bool required = false;    // no default: the caller must give it
};

class Attrs {
 public:
  Attrs() = default;
  explicit Attrs(std::vector<AttrValue> values) : values_(std::move(values)) {}

  size_t size() const { return values_.size(); }
  const AttrValue& operator[](size_t i) const { return values_[i]; }
  AttrValue& operator[](size_t i) { return values_[i]; }

  int64_t integer(size_t i) const { return std::get<int64_t>(values_[i]); }
  double real(size_t i) const { return std::get<double>(values_[i]); }
  bool boolean(size_t i) const { return std::get<bool>(values_[i]); }
  const std::vector<int64_t>& ints(size_t i) const { return std::get<std::vector<int64_t>>(values_[i]); }
  const std::vector<double>& reals(size_t i) const { return std::get<std::vector<double>>(values_[i]); }
  const std::string& string(size_t i) const { return std::get<std::string>(values_[i]); }
  DType dtype(size_t i) const { return std::get<DType>(values_[i]); }

 private:
  std::vector<AttrValue> values_;
};

}  // namespace kiln
