// Deep copies of configuration schemas and values, and the checks that turn
// what a caller gave into a complete configuration in schema order.
#include "plugin/config.hpp"

#include <algorithm>
#include <cstring>

#include "kiln/error.hpp"
#include "kiln/kiln.h"

namespace kiln::abi {
namespace {

const char* type_name(kiln_attr_type type) {
  switch (type) {
    case KILN_ATTR_INT: return "int";
    case KILN_ATTR_FLOAT: return "float";
    case KILN_ATTR_BOOL: return "bool";
    case KILN_ATTR_INTS: return "ints";
    case KILN_ATTR_FLOATS: return "floats";
    case KILN_ATTR_STRING: return "string";
    case KILN_ATTR_DTYPE: return "dtype";
    case KILN_ATTR_TENSOR: return "tensor";
  }
  return "unknown";
}

bool valid_type(kiln_attr_type type) { return int(type) >= KILN_ATTR_INT && int(type) <= KILN_ATTR_TENSOR; }

// Whether `value` may be stored as `want`: the same type, an int for a
// float, ints for floats, or one number for a list of one (kernel_size = 5
// as PyTorch writes it, for [5]).
bool convertible(const kiln_attr& value, kiln_attr_type want) {
  return value.type == want || (want == KILN_ATTR_FLOAT && value.type == KILN_ATTR_INT) ||
         (want == KILN_ATTR_FLOATS && value.type == KILN_ATTR_INTS) ||
         (want == KILN_ATTR_INTS && value.type == KILN_ATTR_INT) ||
         (want == KILN_ATTR_FLOATS && (value.type == KILN_ATTR_INT || value.type == KILN_ATTR_FLOAT));
}

template <class T>
T* copy_array(std::vector<std::unique_ptr<char[]>>& owned, const T* data, size_t len) {
  if (len == 0) return nullptr;
  owned.push_back(std::make_unique<char[]>(len * sizeof(T)));
  std::memcpy(owned.back().get(), data, len * sizeof(T));
  return reinterpret_cast<T*>(owned.back().get());
}

const char* copy_string(std::vector<std::unique_ptr<char[]>>& owned, const char* s) {
  if (!s) return nullptr;
  return copy_array(owned, s, std::strlen(s) + 1);
}

}  // namespace

// ---- Config ----------------------------------------------------------------------

Config::Config(const Config& other) {
  attrs_.reserve(other.attrs_.size());
  for (const kiln_attr& a : other.attrs_) append(a);
}

Config& Config::operator=(const Config& other) {
  if (this != &other) {
    Config copy(other);
    *this = std::move(copy);
  }
  return *this;
}

Config::~Config() {
  for (const kiln_attr& a : attrs_)
    if (a.type == KILN_ATTR_TENSOR) kiln_tensor_release(a.value.tensor);
}

const kiln_attr* Config::find(std::string_view name) const {
  auto it = std::find_if(attrs_.begin(), attrs_.end(), [&](const kiln_attr& a) { return name == a.name; });
  return it == attrs_.end() ? nullptr : &*it;
}

void Config::append(const kiln_attr& value) {
  kiln_attr copy = value;
  copy.name = copy_string(owned_, value.name);
  switch (value.type) {
    case KILN_ATTR_INTS: copy.value.ints.data = copy_array(owned_, value.value.ints.data, value.value.ints.len); break;
    case KILN_ATTR_FLOATS:
      copy.value.floats.data = copy_array(owned_, value.value.floats.data, value.value.floats.len);
      break;
    case KILN_ATTR_STRING: copy.value.s = copy_string(owned_, value.value.s); break;
    case KILN_ATTR_TENSOR: kiln_tensor_retain(value.value.tensor); break;
    default: break;
  }
  attrs_.push_back(copy);
}

void Config::set(const kiln_attr& value) {
  KILN_CHECK(value.name, Status::invalid_argument, "a configuration entry has a NULL name");
  auto it = std::find_if(attrs_.begin(), attrs_.end(), [&](const kiln_attr& a) { return std::strcmp(a.name, value.name) == 0; });
  KILN_CHECK(it != attrs_.end(), Status::invalid_argument, "no configuration entry '", value.name, "'");
  KILN_CHECK(convertible(value, it->type), Status::invalid_argument, "configuration entry '", value.name,
             "' must be of type ", type_name(it->type), ", got ", type_name(value.type));
  const size_t index = size_t(it - attrs_.begin());
  const kiln_attr old = attrs_[index];
  kiln_attr widened = value;
  std::vector<double> reals;
  if (value.type == KILN_ATTR_INT && old.type == KILN_ATTR_FLOAT) {
    widened.type = KILN_ATTR_FLOAT;
    widened.value.f = double(value.value.i);
  } else if (value.type == KILN_ATTR_INTS && old.type == KILN_ATTR_FLOATS) {
    reals.assign(value.value.ints.data, value.value.ints.data + value.value.ints.len);
    widened.type = KILN_ATTR_FLOATS;
    widened.value.floats.data = reals.data();
    widened.value.floats.len = reals.size();
  } else if (value.type == KILN_ATTR_INT && old.type == KILN_ATTR_INTS) {
    widened = kiln_attr_ints(value.name, &value.value.i, 1);
  } else if (value.type != KILN_ATTR_FLOATS && old.type == KILN_ATTR_FLOATS) {
    reals.assign(1, value.type == KILN_ATTR_INT ? double(value.value.i) : value.value.f);
    widened = kiln_attr_floats(value.name, reals.data(), 1);
  }
  widened.name = old.name;
  // Appended then moved into place, so the copy is complete before the old
  // value goes (a failure leaves the configuration as it was).
  append(widened);
  attrs_[index] = attrs_.back();
  attrs_.pop_back();
  if (old.type == KILN_ATTR_TENSOR) kiln_tensor_release(old.value.tensor);
}

// ---- ConfigSchema ---------------------------------------------------------------------

ConfigSchema::ConfigSchema(const kiln_attr_spec* specs, size_t n, std::string owner) : owner_(std::move(owner)) {
  KILN_CHECK(specs || n == 0, Status::invalid_argument, owner_, ": the schema is NULL with ", n, " entries");
  specs_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const kiln_attr_spec& s = specs[i];
    KILN_CHECK(s.attr.name && *s.attr.name, Status::invalid_argument, owner_, ": schema entry ", i, " has no name");
    KILN_CHECK(valid_type(s.attr.type), Status::invalid_argument, owner_, ": schema entry '", s.attr.name,
               "' has an unknown kiln_attr_type value ", int(s.attr.type));
    for (size_t j = 0; j < i; ++j)
      KILN_CHECK(std::strcmp(specs[j].attr.name, s.attr.name) != 0, Status::invalid_argument, owner_,
                 ": schema entry '", s.attr.name, "' appears twice");
    const bool missing_default = (s.attr.type == KILN_ATTR_STRING && !s.attr.value.s) ||
                                 (s.attr.type == KILN_ATTR_INTS && !s.attr.value.ints.data && s.attr.value.ints.len) ||
                                 (s.attr.type == KILN_ATTR_FLOATS && !s.attr.value.floats.data && s.attr.value.floats.len);
    KILN_CHECK(s.required || !missing_default, Status::invalid_argument, owner_, ": schema entry '", s.attr.name,
               "' is optional but its default value is NULL");
    kiln_attr value = s.attr;
    // A required entry has no default; keep a harmless placeholder.
    if (s.required || value.type == KILN_ATTR_TENSOR) std::memset(&value.value, 0, sizeof value.value);
    defaults_.append(value);
    kiln_attr_spec copy{defaults_.attrs_.back(), s.required, nullptr};
    if (s.doc) {
      docs_.push_back(std::make_unique<char[]>(std::strlen(s.doc) + 1));
      std::memcpy(docs_.back().get(), s.doc, std::strlen(s.doc) + 1);
      copy.doc = docs_.back().get();
    }
    specs_.push_back(copy);
  }
}

ConfigSchema::ConfigSchema(const ConfigSchema& other) : ConfigSchema(other.specs(), other.size(), other.owner_) {}

ConfigSchema& ConfigSchema::operator=(const ConfigSchema& other) {
  if (this != &other) *this = ConfigSchema(other);
  return *this;
}

std::string ConfigSchema::entry_list() const {
  if (specs_.empty()) return "it takes no entries";
  std::string out = "its entries are: ";
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (i) out += ", ";
    out += str_cat(specs_[i].attr.name, " (", type_name(specs_[i].attr.type), specs_[i].required ? ", required" : "",
                   ")");
  }
  return out;
}

Config ConfigSchema::make(const kiln_attr* given, size_t n) const { return make(defaults_, given, n); }

Config ConfigSchema::make(const Config& base, const kiln_attr* given, size_t n) const {
  KILN_CHECK(given || n == 0, Status::invalid_argument, owner_, ": the configuration is NULL with ", n, " entries");
  KILN_CHECK(base.size() == specs_.size(), Status::internal, owner_, ": a base configuration of ", base.size(),
             " entries for a schema of ", specs_.size());
  std::vector<const kiln_attr*> chosen(specs_.size(), nullptr);
  for (size_t i = 0; i < n; ++i) {
    const kiln_attr& g = given[i];
    KILN_CHECK(g.name, Status::invalid_argument, owner_, ": configuration entry ", i, " has a NULL name");
    auto it = std::find_if(specs_.begin(), specs_.end(),
                           [&](const kiln_attr_spec& s) { return std::strcmp(s.attr.name, g.name) == 0; });
    KILN_CHECK(it != specs_.end(), Status::invalid_argument, owner_, ": unknown entry '", g.name, "'; ",
               entry_list());
    const size_t index = size_t(it - specs_.begin());
    KILN_CHECK(!chosen[index], Status::invalid_argument, owner_, ": entry '", g.name, "' is given twice");
    KILN_CHECK(convertible(g, it->attr.type), Status::invalid_argument, owner_, ": entry '", g.name, "' must be of type ",
               type_name(it->attr.type), ", got ", type_name(g.type));
    KILN_CHECK(g.type != KILN_ATTR_STRING || g.value.s, Status::invalid_argument, owner_, ": entry '", g.name,
               "' is a NULL string");
    KILN_CHECK(g.type != KILN_ATTR_INTS || g.value.ints.data || !g.value.ints.len, Status::invalid_argument, owner_,
               ": entry '", g.name, "' is a NULL list with ", g.value.ints.len, " ints");
    KILN_CHECK(g.type != KILN_ATTR_FLOATS || g.value.floats.data || !g.value.floats.len, Status::invalid_argument,
               owner_, ": entry '", g.name, "' is a NULL list with ", g.value.floats.len, " floats");
    chosen[index] = &g;
  }
  // A base made by an earlier make() already holds every required entry (an
  // optimizer group inherits the values given at creation); only the
  // schema's defaults lack them.
  const bool base_is_complete = &base != &defaults_;
  Config out;
  out.attrs_.reserve(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) {
    const kiln_attr_spec& spec = specs_[i];
    KILN_CHECK(!spec.required || chosen[i] || base_is_complete, Status::invalid_argument, owner_, ": entry '",
               spec.attr.name, "' (", type_name(spec.attr.type), ") is required but was not given; ", entry_list());
    KILN_CHECK(!spec.required || spec.attr.type != KILN_ATTR_TENSOR || !chosen[i] || chosen[i]->value.tensor,
               Status::invalid_argument, owner_, ": entry '", spec.attr.name, "' is a required tensor but is NULL");
    out.append(base[i]);
    // Through set, so that the schema's type wins (an int given for a float
    // is stored as a float).
    if (chosen[i]) out.set(*chosen[i]);
  }
  return out;
}

}  // namespace kiln::abi
