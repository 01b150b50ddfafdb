#include "kiln/ops/attr_text.hpp"

#include <charconv>

namespace kiln {
namespace {

std::string real_text(double v) {
  char buffer[32];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, v);
  return error == std::errc() ? std::string(buffer, end) : std::to_string(v);
}

std::string integer_text(int64_t v) { return std::to_string(v); }

template <class T>
std::string list_text(const std::vector<T>& values, std::string (*text)(T)) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + text(values[i]);
  return out + "]";
}

}  // namespace

std::string attr_value_text(const AttrValue& value) {
  switch (value.index()) {
    case 0: return integer_text(std::get<int64_t>(value));
    case 1: return real_text(std::get<double>(value));
    case 2: return std::get<bool>(value) ? "true" : "false";
    case 3: return list_text(std::get<std::vector<int64_t>>(value), integer_text);
    case 4: return list_text(std::get<std::vector<double>>(value), real_text);
    case 5: return '"' + std::get<std::string>(value) + '"';
    default: return dtype_name(std::get<DType>(value));
  }
}

}  // namespace kiln
