// The callbacks shared by every in-memory data source.
#include "columns.hpp"

#include <memory>

namespace kiln_data {
namespace {

kiln_status column_source_create(void* user, kiln_runtime* rt, const kiln_attr* config, size_t, void** state) {
  return guard([&] {
    auto build = reinterpret_cast<ColumnBuilder>(user);
    auto source = std::make_unique<ColumnSource>(build(rt, config));
    // An item no tensor can hold is refused now, even in an empty source.
    for (const auto& field : source->fields) field.second.item_bytes();
    source->runtime = rt;
    *state = source.release();
  });
}

kiln_status column_source_length(void* state, int64_t* out) {
  const auto* source = static_cast<const ColumnSource*>(state);
  *out = source->fields.empty() ? 0 : source->fields.front().second.count;
  return KILN_OK;
}

kiln_status column_source_get(void* state, int64_t index, kiln_example* out) {
  return guard([&] {
    const auto* source = static_cast<const ColumnSource*>(state);
    for (const auto& [name, column] : source->fields) {
      const size_t item = column.item_bytes();
      TensorRef t = tensor_from_bytes(source->runtime, column.bytes.data() + size_t(index) * item, column.item_shape,
                                      column.dtype);
      check(host->example_set(out, name.c_str(), t.get()), "setting an example field");
    }
  });
}

void column_source_destroy(void* state) { delete static_cast<ColumnSource*>(state); }

}  // namespace

kiln_data_source_type column_source_type(const char* name, const kiln_attr_spec* config, size_t n_config,
                                         ColumnBuilder build) {
  kiln_data_source_type type{};
  type.size = sizeof type;
  type.name = name;
  type.config = config;
  type.n_config = n_config;
  // The builder travels as the type's user pointer: one create serves all.
  type.user = reinterpret_cast<void*>(build);
  type.create = column_source_create;
  type.length = column_source_length;
  type.get = column_source_get;
  type.destroy = column_source_destroy;
  return type;
}

}  // namespace kiln_data
