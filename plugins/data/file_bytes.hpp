// Whole files read into memory. A file that starts with the gzip magic
// (1f 8b) is decompressed, whatever its name.
#pragma once

#include <string>
#include <vector>

namespace kiln_data {

using Bytes = std::vector<unsigned char>;

// The contents of `path`; `role` says what the file is for in messages
// ("images file"). A missing, unreadable or corrupt gzip file fails naming
// the path.
Bytes read_file(const std::string& path, const char* role);

// `raw` as read from `path`: decompressed when it starts with the gzip
// magic, unchanged otherwise. Concatenated gzip members are one file; a
// truncated or corrupt gzip stream, or other bytes after its end, fails
// naming the path.
Bytes decode_file_bytes(Bytes raw, const std::string& path, const char* role);

// Reads `bytes` little-endian, as T, at `offset` (which the caller has checked).
template <class T>
T read_le(const Bytes& bytes, size_t offset) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= T(bytes[offset + i]) << (8 * i);
  return value;
}

}  // namespace kiln_data
