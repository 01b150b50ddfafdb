// The safetensors format (https://huggingface.co/docs/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON naming each tensor's dtype,
// shape and [begin, end) byte range in the data that follows, then the data.
// Optional "__metadata__" maps strings to strings.
//
// Reading trusts nothing: the header is validated completely (see
// parse_header) before any tensor is read, and nothing is allocated beyond
// what the file holds. Writing is atomic (see write_safetensors).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/dtype.hpp"
#include "kiln/shape.hpp"

namespace kiln::checkpoint {

// Headers longer than this are refused before anything is allocated
// (the reference implementation's limit).
inline constexpr uint64_t kMaxHeaderBytes = 100u << 20;

using Metadata = std::vector<std::pair<std::string, std::string>>;

// One tensor of a file: where its bytes are, relative to the start of the
// data section (the byte after the header).
struct TensorEntry {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

struct Header {
  std::vector<TensorEntry> tensors;  // in ascending order of `begin`
  Metadata metadata;                 // in the file's order
  uint64_t data_offset = 0;          // 8 + the header length: where the data section starts in the file
};

// The dtype names of the format ("F32", "BF16", "I64", "BOOL", ...) for the
// dtypes kiln has.
const char* safetensors_dtype_name(DType t);

// Validates the header of a file of `file_size` bytes whose header JSON is
// `json` (the N bytes after the length) and returns it. Each fault throws
// kiln::Error(Status::io) with its own message: not JSON (with the byte
// offset), not an object, a tensor entry that is not {dtype, shape,
// data_offsets}, an unknown or unsupported dtype, a negative or
// non-integer dimension, more than kMaxDims dimensions, a shape whose byte
// size overflows, data_offsets whose length does not match the shape,
// begin > end, ranges that overlap, gaps between ranges, data that stops
// short of or runs past the end of the file, a name given twice, metadata
// that is not a string-to-string object.
Header parse_header(std::string_view json, uint64_t file_size);

// Reads and validates the header of the file at `path`: a file shorter than
// 8 bytes, a header length beyond the file or above kMaxHeaderBytes, and
// everything parse_header checks fail with their own kiln::Error(io).
Header read_header(const std::string& path);

// A file opened for reading its tensors, its header validated.
class SafetensorsReader {
 public:
  explicit SafetensorsReader(const std::string& path);  // throws kiln::Error(io)
  ~SafetensorsReader();
  SafetensorsReader(const SafetensorsReader&) = delete;
  SafetensorsReader& operator=(const SafetensorsReader&) = delete;

  const Header& header() const { return header_; }
  const std::string& path() const { return path_; }
  // The entry named `name`, or nullptr (a binary search).
  const TensorEntry* find(std::string_view name) const;
  // Copies the bytes of `entry` (one of header().tensors) into `dst`, which
  // holds entry.end - entry.begin bytes. Throws kiln::Error(io) when the
  // read fails (the file changed underneath).
  void read(const TensorEntry& entry, void* dst) const;

 private:
  std::string path_;
  int fd_ = -1;
  Header header_;
  std::vector<size_t> by_name_;  // indices into header_.tensors, in order of name
};

// A tensor to write: contiguous host bytes.
struct TensorBytes {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  const void* data = nullptr;  // shape.numel() * dtype_size(dtype) bytes
};

// Writes `tensors` (in this order, names unique) and `metadata` to `path`
// atomically: a temporary file in the same directory, written completely,
// fsync'ed, renamed over `path`, then the directory fsync'ed. Any failure
// (cannot create, short write, ENOSPC/EFBIG, fsync, rename) throws
// kiln::Error(Status::io) naming the path and the system's reason, removes
// the temporary file, and leaves what was at `path` untouched. A process
// killed during a save leaves its temporary file (.<name>.tmp.<pid>.<n>,
// hidden, beside `path`); later saves neither reuse nor remove such files.
void write_safetensors(const std::string& path, const std::vector<TensorBytes>& tensors, const Metadata& metadata);

}  // namespace kiln::checkpoint
