// "csv": a table of numbers, one example per row. input: the row's
// feature columns as f32[num_features]; target: the label column as i64
// (none when label_column is -1).
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "columns.hpp"
#include "file_bytes.hpp"
#include "sources.hpp"

namespace kiln_data {
namespace {

constexpr int64_t kNoLabel = -1;
constexpr int64_t kLastColumn = -2;

std::vector<std::string_view> split_line(std::string_view line, char delimiter) {
  std::vector<std::string_view> cells;
  size_t start = 0;
  for (size_t end; (end = line.find(delimiter, start)) != std::string_view::npos; start = end + 1)
    cells.push_back(line.substr(start, end - start));
  cells.push_back(line.substr(start));
  return cells;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

double parse_number(std::string_view cell, const std::string& path, size_t line, size_t column) {
  const std::string text(trim(cell));
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    fail(KILN_ERR_IO, "CSV file '", path, "' line ", line, ", column ", column, ": '", text, "' is not a number");
  return value;
}

struct CsvConfig {
  std::string path;
  bool header;
  int64_t label_column;
  char delimiter;
};

CsvConfig read_config(const kiln_attr* config) {
  CsvConfig c{config_string(config[0]), config[1].value.b != 0, config[2].value.i, ','};
  const std::string delimiter = config_string(config[3]);
  if (delimiter.size() != 1)
    fail(KILN_ERR_INVALID_ARGUMENT, "'delimiter' is \"", delimiter, "\"; expected exactly one character");
  c.delimiter = delimiter[0];
  if (c.label_column < kLastColumn)
    fail(KILN_ERR_INVALID_ARGUMENT, "'label_column' is ", c.label_column,
         "; expected a column index, -1 (no label) or -2 (the last column)");
  return c;
}

ColumnSource build(kiln_runtime*, const kiln_attr* config) {
  const CsvConfig c = read_config(config);
  const Bytes bytes = read_file(c.path, "CSV file");
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  Column inputs{KILN_F32, {}, 0, {}}, targets{KILN_I64, {}, 0, {}};
  size_t width = 0, label = 0, first_line = 0;
  std::vector<float> row;
  size_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (trim(line).empty()) continue;
    const std::vector<std::string_view> cells = split_line(line, c.delimiter);
    if (width == 0) {
      width = cells.size();
      first_line = line_number;
      label = c.label_column == kLastColumn ? width - 1 : size_t(c.label_column);
      if (c.label_column != kNoLabel && label >= width)
        fail(KILN_ERR_INVALID_ARGUMENT, "'label_column' is ", c.label_column, " but CSV file '", c.path, "' has ",
             width, " columns");
      inputs.item_shape = {int64_t(c.label_column == kNoLabel ? width : width - 1)};
      if (c.header) continue;
    } else if (cells.size() != width) {
      fail(KILN_ERR_IO, "CSV file '", c.path, "' line ", line_number, " has ", cells.size(), " columns, line ",
           first_line, " has ", width);
    }
    row.clear();
    for (size_t col = 0; col < width; ++col) {
      const double value = parse_number(cells[col], c.path, line_number, col + 1);
      if (c.label_column == kNoLabel || col != label) {
        row.push_back(float(value));
        continue;
      }
      if (value != std::floor(value) || std::fabs(value) >= 0x1p63)
        fail(KILN_ERR_IO, "CSV file '", c.path, "' line ", line_number, ", column ", col + 1, ": label ", value,
             " is not an integer");
      const int64_t target = int64_t(value);
      const auto* target_bytes = reinterpret_cast<const unsigned char*>(&target);
      targets.bytes.insert(targets.bytes.end(), target_bytes, target_bytes + sizeof target);
      ++targets.count;
    }
    const auto* row_bytes = reinterpret_cast<const unsigned char*>(row.data());
    inputs.bytes.insert(inputs.bytes.end(), row_bytes, row_bytes + row.size() * sizeof(float));
    ++inputs.count;
  }
  if (width == 0) fail(KILN_ERR_IO, "CSV file '", c.path, "' has no rows");
  ColumnSource source;
  source.fields.emplace_back("input", std::move(inputs));
  if (c.label_column != kNoLabel) source.fields.emplace_back("target", std::move(targets));
  return source;
}

}  // namespace

kiln_status register_csv_source(kiln_registrar* r) {
  static const kiln_attr_spec config[] = {
      {kiln_attr_string("path", ""), 1, "path of the CSV file"},
      {kiln_attr_bool("header", 1), 0, "whether the first row names the columns (and is skipped)"},
      {kiln_attr_int("label_column", kLastColumn), 0,
       "0-based column of the integer label; -1: no label; -2 (default): the last column"},
      {kiln_attr_string("delimiter", ","), 0, "the one character between cells"},
  };
  const kiln_data_source_type type = column_source_type("csv", config, 4, build);
  return host->register_data_source(r, &type);
}

}  // namespace kiln_data
