// The CIFAR-10 binary batch format: records of one label byte (0..9) and a
// 3x32x32 image, channel-major, back to back.
#pragma once

#include <string>

#include "columns.hpp"
#include "file_bytes.hpp"

namespace kiln_data {

inline constexpr int64_t kCifar10Side = 32;

// Appends the records of `file` (the bytes of the batch `path`) to `images`
// (u8[3,32,32]) and `labels` (i64). A size that is not a positive multiple
// of a record, or a label past 9, fails naming the file and the record.
void append_cifar10_records(const Bytes& file, const std::string& path, Column& images, Column& labels);

}  // namespace kiln_data
