// libFuzzer target: arbitrary bytes as an IDX file, plain or gzip-compressed,
// through the reader the "idx" source uses. The result is a refusal naming
// the file or an array whose data is exactly what its dimensions promise.
#include "fuzz_data_support.hpp"
#include "idx_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln_fuzz;
  parse_or_refuse([&] {
    const kiln_data::Bytes bytes = kiln_data::decode_file_bytes({data, data + size}, kPath, "images file");
    const kiln_data::IdxArray a = kiln_data::parse_idx(bytes, kPath, "images file");
    require(a.data.size() == size_t(kiln_data::numel(a.dims)) * kiln_data::dtype_size(a.dtype));
  });
  return 0;
}
