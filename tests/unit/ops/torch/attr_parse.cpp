#include "ops/torch/attr_parse.hpp"

#include <cerrno>
#include <cstdlib>

#include "kiln/error.hpp"

namespace kiln::test {
namespace {

[[noreturn]] void refuse(std::string_view text, AttrType type) {
  throw_error(Status::invalid_argument, str_cat("cannot read '", text, "' as ", attr_type_name(type)));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

int64_t parse_integer(std::string_view text) {
  const std::string s(trim(text));
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || errno != 0 || *end != '\0') refuse(text, AttrType::integer);
  return v;
}

// strtod reads what Python's repr writes: 0.5, 1e-05, inf, -inf, nan.
double parse_real(std::string_view text) {
  const std::string s(trim(text));
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0') refuse(text, AttrType::real);
  return v;
}

template <class T, class Parse>
std::vector<T> parse_list(std::string_view text, AttrType type, Parse parse) {
  std::string_view s = trim(text);
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') refuse(text, type);
  s = trim(s.substr(1, s.size() - 2));
  std::vector<T> out;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    try {
      out.push_back(parse(s.substr(0, comma)));
    } catch (const Error&) {
      refuse(text, type);  // the whole list, not only the bad item
    }
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
  }
  return out;
}

}  // namespace

AttrValue parse_attr_value(std::string_view text, AttrType type) {
  switch (type) {
    case AttrType::integer: return parse_integer(text);
    case AttrType::real: return parse_real(text);
    case AttrType::boolean:
      if (text == "true" || text == "false") return text == "true";
      refuse(text, type);
    case AttrType::ints: return parse_list<int64_t>(text, type, parse_integer);
    case AttrType::reals: return parse_list<double>(text, type, parse_real);
    case AttrType::string:
      if (text.size() < 2 || text.front() != '"' || text.back() != '"') refuse(text, type);
      return std::string(text.substr(1, text.size() - 2));
    case AttrType::dtype: {
      DType t = DType::f32;
      if (!parse_dtype(text, &t)) refuse(text, type);
      return t;
    }
  }
  refuse(text, type);
}

Attrs parse_attrs(const OpDef& op, const std::vector<std::pair<std::string, std::string>>& given) {
  std::vector<std::pair<std::string_view, AttrValue>> values;
  for (const auto& [name, text] : given) {
    const int index = op.attr_index(name);
    KILN_CHECK(index >= 0, Status::invalid_argument, "op '", op.name, "' has no attribute '", name, "'");
    values.emplace_back(name, parse_attr_value(text, op.attrs[size_t(index)].type));
  }
  return op.make_attrs(values);
}

}  // namespace kiln::test
