// In-memory data sources: every field of every example held in one buffer
// per field ("input", "target"), read into memory at creation. get() copies
// one item of each field into new CPU tensors, and only reads the buffers,
// so any number of threads may call it at once. The file readers (idx,
// cifar10, npy, csv) and the tensors source build one of these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support.hpp"

namespace kiln_data {

// `count` items of shape `item_shape` and type `dtype`, row-major.
struct Column {
  kiln_dtype dtype = KILN_U8;
  std::vector<int64_t> item_shape;
  int64_t count = 0;
  std::vector<unsigned char> bytes;  // count * item_bytes()

  size_t item_bytes() const { return size_t(numel(item_shape)) * dtype_size(dtype); }
};

struct ColumnSource {
  kiln_runtime* runtime = nullptr;
  std::vector<std::pair<std::string, Column>> fields;  // all of the same count
};

// A source type whose create builds a ColumnSource with `build` (config in
// schema order -> source); what `build` throws becomes the create's error.
using ColumnBuilder = ColumnSource (*)(kiln_runtime* rt, const kiln_attr* config);
kiln_data_source_type column_source_type(const char* name, const kiln_attr_spec* config, size_t n_config,
                                         ColumnBuilder build);

}  // namespace kiln_data
