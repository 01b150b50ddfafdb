// The IDX format (MNIST, Fashion-MNIST): a big-endian header of two zero
// bytes, a type code, the number of dimensions and each dimension as a
// 32-bit integer, then the elements, big-endian, row-major.
#pragma once

#include <string>
#include <vector>

#include "file_bytes.hpp"
#include "support.hpp"

namespace kiln_data {

struct IdxArray {
  kiln_dtype dtype;  // i8 and i16 files are widened to i32 (kiln has neither)
  std::vector<int64_t> dims;
  Bytes data;  // host byte order
};

// Parses the IDX file `path` (its bytes in `file`); a short header, a
// wrong magic, an unknown type code or data that is not exactly what the
// header promises fails naming the file and the sizes.
IdxArray parse_idx(const Bytes& file, const std::string& path, const char* role);

}  // namespace kiln_data
