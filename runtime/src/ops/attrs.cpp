#include "kiln/ops/attrs.hpp"

#include "kiln/error.hpp"
#include "kiln/ops/op_def.hpp"

namespace kiln {

const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::integer: return "integer";
    case AttrType::real: return "real";
    case AttrType::boolean: return "boolean";
    case AttrType::ints: return "integer list";
    case AttrType::reals: return "real list";
    case AttrType::string: return "string";
    case AttrType::dtype: return "dtype";
  }
  return "?";
}

namespace {

AttrType type_of(const AttrValue& v) {
  switch (v.index()) {
    case 0: return AttrType::integer;
    case 1: return AttrType::real;
    case 2: return AttrType::boolean;
    case 3: return AttrType::ints;
    case 4: return AttrType::reals;
    case 5: return AttrType::string;
    default: return AttrType::dtype;
  }
}

// Accepts the conversions a caller means without ambiguity: an integer where
// a real is expected, a single integer where a list is expected (stride=2 for
// stride=[2, 2] is spelled out by the op, not here).
bool coerce(AttrValue& v, AttrType want) {
  const AttrType have = type_of(v);
  if (have == want) return true;
  if (want == AttrType::real && have == AttrType::integer) {
    v = double(std::get<int64_t>(v));
    return true;
  }
  if (want == AttrType::reals && have == AttrType::ints) {
    const auto& ints = std::get<std::vector<int64_t>>(v);
    v = std::vector<double>(ints.begin(), ints.end());
    return true;
  }
  return false;
}

}  // namespace

int OpDef::attr_index(std::string_view name) const {
  for (size_t i = 0; i < attrs.size(); ++i)
    if (attrs[i].name == name) return int(i);
  return -1;
}

const AttrValue& OpDef::attr(const Attrs& values, std::string_view name) const {
  const int i = attr_index(name);
  KILN_CHECK(i >= 0 && size_t(i) < values.size(), Status::internal, "op '", this->name,
             "' has no attribute '", name, "'");
  return values[size_t(i)];
}

Attrs OpDef::make_attrs(std::span<const std::pair<std::string_view, AttrValue>> given) const {
  std::vector<AttrValue> values(attrs.size());
  std::vector<bool> set(attrs.size(), false);
  for (const auto& [key, value] : given) {
    const int i = attr_index(key);
    if (i < 0) {
      std::string known;
      for (const AttrSpec& a : attrs) known += (known.empty() ? "" : ", ") + a.name;
      throw_error(Status::invalid_argument, str_cat("op '", name, "' has no attribute '", key, "' (its attributes: ",
                                                    known.empty() ? "none" : known, ")"));
    }
    AttrValue v = value;
    KILN_CHECK(coerce(v, attrs[size_t(i)].type), Status::invalid_argument, "op '", name, "': attribute '", key,
               "' must be a ", attr_type_name(attrs[size_t(i)].type), ", got a ", attr_type_name(type_of(value)));
    values[size_t(i)] = std::move(v);
    set[size_t(i)] = true;
  }
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (set[i]) continue;
    KILN_CHECK(!attrs[i].required, Status::invalid_argument, "op '", name, "': attribute '", attrs[i].name,
               "' is required");
    values[i] = attrs[i].default_value;
  }
  return Attrs(std::move(values));
}

}  // namespace kiln
