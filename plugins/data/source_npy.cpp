// "npy": arrays in .npy files, examples along dimension 0. input: one row
// of the inputs file (its dtype and item shape); target: one row of the
// targets file, when one is given.
#include "columns.hpp"
#include "npy_format.hpp"
#include "sources.hpp"

namespace kiln_data {
namespace {

Column column_of(NpyArray array, const std::string& path) {
  if (array.shape.empty())
    fail(KILN_ERR_SHAPE_MISMATCH, "NPY file '", path, "' holds a 0-dimensional array; expected examples along dimension 0");
  return Column{array.dtype, {array.shape.begin() + 1, array.shape.end()}, array.shape[0], std::move(array.data)};
}

ColumnSource build(kiln_runtime*, const kiln_attr* config) {
  const std::string inputs_path = config_string(config[0]), targets_path = config_string(config[1]);
  ColumnSource source;
  source.fields.emplace_back("input", column_of(parse_npy(read_file(inputs_path, "NPY file"), inputs_path), inputs_path));
  if (targets_path.empty()) return source;
  Column targets = column_of(parse_npy(read_file(targets_path, "NPY file"), targets_path), targets_path);
  const int64_t n_inputs = source.fields[0].second.count;
  if (targets.count != n_inputs)
    fail(KILN_ERR_SHAPE_MISMATCH, "inputs '", inputs_path, "' hold ", n_inputs, " examples, targets '", targets_path,
         "' hold ", targets.count, "; they must hold the same number");
  source.fields.emplace_back("target", std::move(targets));
  return source;
}

}  // namespace

kiln_status register_npy_source(kiln_registrar* r) {
  static const kiln_attr_spec config[] = {
      {kiln_attr_string("inputs", ""), 1, "path of the .npy file of inputs (examples along dimension 0)"},
      {kiln_attr_string("targets", ""), 0, "path of the .npy file of targets; empty: examples have no target"},
  };
  const kiln_data_source_type type = column_source_type("npy", config, 2, build);
  return host->register_data_source(r, &type);
}

}  // namespace kiln_data
