// Parsing the CSV text of the "csv" source.
#include "csv_format.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace kiln_data {
namespace {

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

}  // namespace

CsvTable parse_csv(std::string_view text, const CsvLayout& layout, const std::string& path) {
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
    const std::vector<std::string_view> cells = split_line(line, layout.delimiter);
    if (width == 0) {
      width = cells.size();
      first_line = line_number;
      label = layout.label_column == kCsvLastColumn ? width - 1 : size_t(layout.label_column);
      if (layout.label_column != kCsvNoLabel && label >= width)
        fail(KILN_ERR_INVALID_ARGUMENT, "'label_column' is ", layout.label_column, " but CSV file '", path, "' has ",
             width, " columns");
      inputs.item_shape = {int64_t(layout.label_column == kCsvNoLabel ? width : width - 1)};
      if (layout.header) continue;
    } else if (cells.size() != width) {
      fail(KILN_ERR_IO, "CSV file '", path, "' line ", line_number, " has ", cells.size(), " columns, line ",
           first_line, " has ", width);
    }
    row.clear();
    for (size_t col = 0; col < width; ++col) {
      const double value = parse_number(cells[col], path, line_number, col + 1);
      if (layout.label_column == kCsvNoLabel || col != label) {
        row.push_back(float(value));
        continue;
      }
      if (value != std::floor(value) || std::fabs(value) >= 0x1p63)
        fail(KILN_ERR_IO, "CSV file '", path, "' line ", line_number, ", column ", col + 1, ": label ", value,
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
  if (width == 0) fail(KILN_ERR_IO, "CSV file '", path, "' has no rows");
  return {std::move(inputs), std::move(targets)};
}

}  // namespace kiln_data
