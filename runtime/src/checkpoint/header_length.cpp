#include "header_length.hpp"

#include "kiln/checkpoint/safetensors.hpp"
#include "kiln/error.hpp"

namespace kiln::checkpoint {

uint64_t checked_header_length(std::span<const unsigned char> prefix, uint64_t file_size) {
  KILN_CHECK(file_size >= 8 && prefix.size() >= 8, Status::io, "the file is truncated: ", file_size,
             " bytes, less than the 8 bytes of the header length");
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | prefix[size_t(i)];
  KILN_CHECK(length <= kMaxHeaderBytes, Status::io, "the header length ", length, " is above the limit of ",
             kMaxHeaderBytes, " bytes");
  KILN_CHECK(length <= file_size - 8, Status::io, "the header length ", length, " runs past the end of the file (",
             file_size, " bytes)");
  return length;
}

}  // namespace kiln::checkpoint
