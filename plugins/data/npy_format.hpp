// The NumPy .npy format, versions 1, 2 and 3: the magic "\x93NUMPY", a
// version, a little-endian header length (16 bits in v1, 32 in v2 and v3),
// a Python dict literal {'descr': '<f4', 'fortran_order': False,
// 'shape': (N, ...)}, then the data, row-major.
#pragma once

#include <string>
#include <vector>

#include "file_bytes.hpp"
#include "support.hpp"

namespace kiln_data {

struct NpyArray {
  kiln_dtype dtype;
  std::vector<int64_t> shape;
  Bytes data;
};

// Parses the .npy file `path` (its bytes in `file`). Takes the dtypes <f4
// <f8 <i4 <i8 |u1 |b1, and >f4 >f8 >i4 >i8 (byte-swapped to host order);
// refuses Fortran order, a wrong magic, a header that does not parse and
// data of another size than the header says.
NpyArray parse_npy(const Bytes& file, const std::string& path);

}  // namespace kiln_data
