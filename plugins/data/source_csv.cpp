// "csv": a table of numbers, one example per row. input: the row's
// feature columns as f32[num_features]; target: the label column as i64
// (none when label_column is -1).
#include "columns.hpp"
#include "csv_format.hpp"
#include "file_bytes.hpp"
#include "sources.hpp"

namespace kiln_data {
namespace {

struct CsvConfig {
  std::string path;
  CsvLayout layout;
};

CsvConfig read_config(const kiln_attr* config) {
  CsvConfig c{config_string(config[0]), {config[1].value.b != 0, config[2].value.i, ','}};
  const std::string delimiter = config_string(config[3]);
  if (delimiter.size() != 1)
    fail(KILN_ERR_INVALID_ARGUMENT, "'delimiter' is \"", delimiter, "\"; expected exactly one character");
  c.layout.delimiter = delimiter[0];
  if (c.layout.label_column < kCsvLastColumn)
    fail(KILN_ERR_INVALID_ARGUMENT, "'label_column' is ", c.layout.label_column,
         "; expected a column index, -1 (no label) or -2 (the last column)");
  return c;
}

ColumnSource build(kiln_runtime*, const kiln_attr* config) {
  const CsvConfig c = read_config(config);
  const Bytes bytes = read_file(c.path, "CSV file");
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  CsvTable table = parse_csv(text, c.layout, c.path);
  ColumnSource source;
  source.fields.emplace_back("input", std::move(table.inputs));
  if (c.layout.label_column != kCsvNoLabel) source.fields.emplace_back("target", std::move(table.targets));
  return source;
}

}  // namespace

kiln_status register_csv_source(kiln_registrar* r) {
  static const kiln_attr_spec config[] = {
      {kiln_attr_string("path", ""), 1, "path of the CSV file"},
      {kiln_attr_bool("header", 1), 0, "whether the first row names the columns (and is skipped)"},
      {kiln_attr_int("label_column", kCsvLastColumn), 0,
       "0-based column of the integer label; -1: no label; -2 (default): the last column"},
      {kiln_attr_string("delimiter", ","), 0, "the one character between cells"},
  };
  const kiln_data_source_type type = column_source_type("csv", config, 4, build);
  return host->register_data_source(r, &type);
}

}  // namespace kiln_data
