// Parsing IDX files.
#include "idx_format.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace kiln_data {
namespace {

struct IdxType {
  unsigned char code;
  const char* name;
  size_t file_size;  // bytes of one element in the file
  kiln_dtype dtype;
};

constexpr IdxType kIdxTypes[] = {
    {0x08, "u8", 1, KILN_U8},   {0x09, "i8", 1, KILN_I32},  {0x0B, "i16", 2, KILN_I32},
    {0x0C, "i32", 4, KILN_I32}, {0x0D, "f32", 4, KILN_F32}, {0x0E, "f64", 8, KILN_F64},
};

std::string hex32(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08X", unsigned(v));
  return text;
}

uint64_t read_be(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

// Element `i` of the file's data as the kiln dtype, in host byte order.
void convert_elements(const IdxType& type, const unsigned char* src, int64_t n, Bytes& out) {
  out.resize(size_t(n) * dtype_size(type.dtype));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t raw = read_be(src + size_t(i) * type.file_size, type.file_size);
    unsigned char* dst = out.data() + size_t(i) * dtype_size(type.dtype);
    if (type.code == 0x08) {
      *dst = uint8_t(raw);
    } else if (type.code == 0x09 || type.code == 0x0B || type.code == 0x0C) {
      // Sign-extend from the file's width.
      const unsigned bits = unsigned(type.file_size * 8);
      const int32_t value = int32_t(int64_t(raw << (64 - bits)) >> (64 - bits));
      std::memcpy(dst, &value, sizeof value);
    } else if (type.code == 0x0D) {
      const uint32_t bits = uint32_t(raw);
      std::memcpy(dst, &bits, sizeof bits);
    } else {
      std::memcpy(dst, &raw, sizeof raw);
    }
  }
}

}  // namespace

IdxArray parse_idx(const Bytes& file, const std::string& path, const char* role) {
  if (file.size() < 4)
    fail(KILN_ERR_IO, role, " '", path, "' is truncated: it holds ", file.size(),
         " bytes, an IDX header needs at least 4");
  const uint32_t magic = uint32_t(read_be(file.data(), 4));
  const IdxType* type = nullptr;
  for (const IdxType& t : kIdxTypes)
    if (t.code == file[2]) type = &t;
  if (file[0] != 0 || file[1] != 0 || !type)
    fail(KILN_ERR_IO, role, " '", path, "' is not an IDX file: its magic number is ", hex32(magic),
         ", expected 0x00000TDD with type code T in {08,09,0B,0C,0D,0E} and D dimensions "
         "(0x00000803 for images, 0x00000801 for labels)");
  const size_t rank = file[3];
  if (rank == 0) fail(KILN_ERR_IO, role, " '", path, "' has 0 dimensions (magic ", hex32(magic), "); expected at least 1");
  const size_t header = 4 + 4 * rank;
  if (file.size() < header)
    fail(KILN_ERR_IO, role, " '", path, "' is truncated: it holds ", file.size(), " bytes, its ", rank,
         "-dimensional header needs ", header);
  IdxArray array{type->dtype, {}, {}};
  const uint64_t held = file.size() - header;
  uint64_t expected = type->file_size;
  bool overflow = false;  // a product past 2^64 is more than any file holds
  for (size_t d = 0; d < rank; ++d) {
    const uint64_t dim = read_be(file.data() + 4 + 4 * d, 4);
    array.dims.push_back(int64_t(dim));
    overflow = __builtin_mul_overflow(expected, dim, &expected) || overflow;
  }
  if (std::find(array.dims.begin(), array.dims.end(), 0) != array.dims.end()) {
    expected = 0;  // an empty array, however large its other dimensions
    overflow = false;
  }
  if (overflow) expected = UINT64_MAX;
  if (held < expected)
    fail(KILN_ERR_IO, role, " '", path, "' is truncated: its header promises ", type->name, shape_text(array.dims),
         " = ", overflow ? std::string("more than 2^64") : cat(expected, " bytes"), " of data, the file holds ", held);
  if (held > expected)
    fail(KILN_ERR_IO, role, " '", path, "' holds ", held, " bytes of data, ", held - expected,
         " more than its header promises (", type->name, shape_text(array.dims), " = ", expected, " bytes)");
  convert_elements(*type, file.data() + header, numel(array.dims), array.data);
  return array;
}

}  // namespace kiln_data
