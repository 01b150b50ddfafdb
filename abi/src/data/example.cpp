// Example handles: named CPU tensors, set and read by name or by position.
#include "data/example.hpp"

#include <string_view>

#include "guard.hpp"
#include "handles.hpp"
#include "kiln/error.hpp"

using kiln::abi::guarded;

kiln_example::kiln_example(kiln_runtime* rt) : runtime(rt) { kiln_runtime_retain(rt); }

kiln_example::~kiln_example() {
  for (Field& field : fields) kiln_tensor_release(field.tensor);
  kiln_runtime_release(runtime);
}

namespace {

// The field `name` of `ex` (const or not), or nullptr.
template <class Example>
auto* find_field(Example& ex, std::string_view name) {
  decltype(&ex.fields.front()) found = nullptr;
  for (auto& field : ex.fields)
    if (field.name == name) found = &field;
  return found;
}

std::string field_names(const kiln_example& ex) {
  if (ex.fields.empty()) return "it has none";
  std::string names = "it has ";
  for (size_t i = 0; i < ex.fields.size(); ++i) names.append(i ? ", '" : "'").append(ex.fields[i].name).append("'");
  return names;
}

}  // namespace

extern "C" {

kiln_status kiln_example_create(kiln_runtime* rt, kiln_example** out) {
  KILN_REQUIRE(rt, out);
  return guarded(__func__, [&] { *out = new kiln_example(rt); });
}

void kiln_example_release(kiln_example* ex) {
  if (ex && ex->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete ex;
}

kiln_status kiln_example_set(kiln_example* ex, const char* name, kiln_tensor* t) {
  KILN_REQUIRE(ex, name, t);
  return guarded(__func__, [&] {
    KILN_CHECK(*name != '\0', kiln::Status::invalid_argument, "a field name must not be empty");
    kiln::abi::check_owner(ex->runtime, t, "t");
    KILN_CHECK(t->tensor.device().is_cpu(), kiln::Status::device_mismatch, "field '", name,
               "': examples hold CPU tensors, the tensor is on ", to_string(t->tensor.device()));
    std::lock_guard lock(ex->mutex);
    kiln_tensor_retain(t);
    if (kiln_example::Field* field = find_field(*ex, name)) {
      kiln_tensor_release(field->tensor);
      field->tensor = t;
      return;
    }
    try {
      ex->fields.push_back({name, t});
    } catch (...) {
      kiln_tensor_release(t);
      throw;
    }
  });
}

kiln_status kiln_example_get(const kiln_example* ex, const char* name, kiln_tensor** out) {
  KILN_REQUIRE(ex, name, out);
  return guarded(__func__, [&] {
    std::lock_guard lock(ex->mutex);
    const kiln_example::Field* field = find_field(*ex, name);
    KILN_CHECK(field, kiln::Status::not_found, "the example has no field '", name, "' (", field_names(*ex), ")");
    kiln_tensor_retain(field->tensor);
    *out = field->tensor;
  });
}

kiln_status kiln_example_field_count(const kiln_example* ex, size_t* out) {
  KILN_REQUIRE(ex, out);
  return guarded(__func__, [&] {
    std::lock_guard lock(ex->mutex);
    *out = ex->fields.size();
  });
}

kiln_status kiln_example_field(const kiln_example* ex, size_t index, const char** name, kiln_tensor** out) {
  KILN_REQUIRE(ex, name, out);
  return guarded(__func__, [&] {
    std::lock_guard lock(ex->mutex);
    KILN_CHECK(index < ex->fields.size(), kiln::Status::invalid_argument, "field index ", index,
               " is out of range: the example has ", ex->fields.size(), " field(s)");
    const kiln_example::Field& field = ex->fields[index];
    kiln_tensor_retain(field.tensor);
    *name = field.name.c_str();
    *out = field.tensor;
  });
}

}  // extern "C"
