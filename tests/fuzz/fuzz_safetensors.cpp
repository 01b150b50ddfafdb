// libFuzzer target: arbitrary bytes as a whole safetensors file image (the
// 8-byte length, the header, the data) go through the same checks as a file
// on disk. Whatever the bytes, the result is a kiln::Error(Status::io) or a
// header whose tensors tile the data exactly; anything else (a crash, a
// sanitizer report, another exception, a broken invariant) is a finding.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "header_length.hpp"
#include "kiln/checkpoint/safetensors.hpp"
#include "kiln/error.hpp"

namespace {

using namespace kiln;
using namespace kiln::checkpoint;

void require(bool invariant) {
  if (!invariant) std::abort();
}

// What read_header promises of a header it returns.
void check_invariants(const Header& header, uint64_t file_size) {
  require(header.data_offset <= file_size);
  uint64_t covered = 0;
  for (const TensorEntry& t : header.tensors) {
    require(t.begin == covered && t.begin <= t.end);
    require(t.shape.rank() <= kMaxDims);
    uint64_t bytes = dtype_size(t.dtype);
    for (int64_t d : t.shape) {
      require(d >= 0);
      bytes *= uint64_t(d);
    }
    require(bytes == t.end - t.begin);
    covered = t.end;
  }
  require(header.data_offset + covered == file_size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const uint64_t length = checked_header_length({data, std::min<size_t>(size, 8)}, size);
    const std::string_view json(reinterpret_cast<const char*>(data) + 8, size_t(length));
    check_invariants(parse_header(json, size), size);
  } catch (const Error& e) {
    require(e.status() == Status::io);
  }
  return 0;
}
