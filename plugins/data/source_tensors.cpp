// "tensors": examples taken from tensors in memory, along dimension 0.
// input: one row of the "input" tensor; target: one row of "target", when
// given. The tensors are copied at creation, so later writes to them do
// not change the source.
#include "columns.hpp"
#include "sources.hpp"

namespace kiln_data {
namespace {

Column column_of(kiln_tensor* t, const char* name) {
  kiln_tensor_desc desc;
  check(host->tensor_describe(t, &desc), name);
  if (desc.rank < 1)
    fail(KILN_ERR_SHAPE_MISMATCH, "'", name, "' is a scalar; expected a tensor with examples along dimension 0");
  Column column{desc.dtype, {desc.dims + 1, desc.dims + desc.rank}, desc.dims[0], {}};
  column.bytes.resize(size_t(column.count) * column.item_bytes());
  check(host->tensor_read(t, column.bytes.data(), column.bytes.size()), name);
  return column;
}

ColumnSource build(kiln_runtime*, const kiln_attr* config) {
  ColumnSource source;
  source.fields.emplace_back("input", column_of(config[0].value.tensor, "input"));
  if (!config[1].value.tensor) return source;
  Column targets = column_of(config[1].value.tensor, "target");
  const int64_t n_inputs = source.fields[0].second.count;
  if (targets.count != n_inputs)
    fail(KILN_ERR_SHAPE_MISMATCH, "'input' holds ", n_inputs, " examples (dimension 0), 'target' holds ",
         targets.count, "; they must hold the same number");
  source.fields.emplace_back("target", std::move(targets));
  return source;
}

}  // namespace

kiln_status register_tensors_source(kiln_registrar* r) {
  static const kiln_attr_spec config[] = {
      {kiln_attr_tensor("input", nullptr), 1, "the inputs, examples along dimension 0"},
      {kiln_attr_tensor("target", nullptr), 0, "the targets, examples along dimension 0; optional"},
  };
  const kiln_data_source_type type = column_source_type("tensors", config, 2, build);
  return host->register_data_source(r, &type);
}

}  // namespace kiln_data
