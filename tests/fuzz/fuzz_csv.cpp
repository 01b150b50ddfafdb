// libFuzzer target: arbitrary bytes as a CSV file through the parser the
// "csv" source uses; the first byte picks the layout (header or not, which
// label column, the delimiter). The result is a refusal naming the file or
// a table whose rows all have the first row's width.
#include "csv_format.hpp"
#include "fuzz_data_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln_fuzz;
  if (size == 0) return 0;
  static const char kDelimiters[] = {',', ';', '\t', ' '};
  const uint8_t pick = data[0];
  const kiln_data::CsvLayout layout{(pick & 1) != 0, int64_t((pick >> 1) & 3) - 2, kDelimiters[(pick >> 3) & 3]};
  parse_or_refuse([&] {
    const kiln_data::Bytes bytes = kiln_data::decode_file_bytes({data + 1, data + size}, kPath, "CSV file");
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    const kiln_data::CsvTable t = kiln_data::parse_csv(text, layout, kPath);
    require(t.inputs.item_shape.size() == 1);
    require(t.inputs.bytes.size() == size_t(t.inputs.count) * t.inputs.item_bytes());
    if (layout.label_column != kiln_data::kCsvNoLabel) require(t.targets.count == t.inputs.count);
  });
  return 0;
}
