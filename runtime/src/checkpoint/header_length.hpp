// The first check of a safetensors file image, shared by the file reader and
// the fuzz target: the 8-byte little-endian header length against the size of
// the file, done before the header buffer is allocated.
#pragma once

#include <cstdint>
#include <span>

namespace kiln::checkpoint {

// The header length N stored in `prefix` (the first min(8, file_size) bytes
// of a file of `file_size` bytes). Throws kiln::Error(Status::io) when the
// file is shorter than 8 bytes, N is above kMaxHeaderBytes, or N runs past
// the end of the file.
uint64_t checked_header_length(std::span<const unsigned char> prefix, uint64_t file_size);

}  // namespace kiln::checkpoint
