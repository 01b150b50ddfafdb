// libFuzzer target: arbitrary bytes as a .npy file, plain or gzip-compressed,
// through the reader the "npy" source uses. The result is a refusal naming
// the file or an array whose data is exactly what its shape promises.
#include "fuzz_data_support.hpp"
#include "npy_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln_fuzz;
  parse_or_refuse([&] {
    const kiln_data::Bytes bytes = kiln_data::decode_file_bytes({data, data + size}, kPath, "NPY file");
    const kiln_data::NpyArray a = kiln_data::parse_npy(bytes, kPath);
    require(a.data.size() == size_t(kiln_data::numel(a.shape)) * kiln_data::dtype_size(a.dtype));
  });
  return 0;
}
