// The CSV text of the "csv" source: a table of numbers, one example per
// row, every row as wide as the first; the label column (when there is one)
// holds integers.
#pragma once

#include <string>
#include <string_view>

#include "columns.hpp"

namespace kiln_data {

inline constexpr int64_t kCsvNoLabel = -1;
inline constexpr int64_t kCsvLastColumn = -2;

struct CsvLayout {
  bool header;           // the first row names the columns and is skipped
  int64_t label_column;  // a 0-based column, kCsvNoLabel or kCsvLastColumn
  char delimiter;
};

struct CsvTable {
  Column inputs;   // f32[features] per row
  Column targets;  // i64 per row; empty without a label column
};

// Parses `text`, the contents of the CSV file `path`. A ragged row, a cell
// that is not a number, a label that is not an integer, a label column past
// the last one or a file without rows fails naming the file and the line.
CsvTable parse_csv(std::string_view text, const CsvLayout& layout, const std::string& path);

}  // namespace kiln_data
