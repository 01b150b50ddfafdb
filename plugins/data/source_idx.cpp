// "idx": images and labels in IDX files (MNIST, Fashion-MNIST), plain or
// gzip-compressed. input: one image (the images file's item shape and
// type, u8[28,28] for MNIST); target: its label as an i64 scalar. `limit`
// keeps only the first examples (a quick run on a subset).
#include "columns.hpp"
#include "idx_format.hpp"
#include "sources.hpp"

namespace kiln_data {
namespace {

Column labels_column(const IdxArray& labels, const std::string& path) {
  if (labels.dims.size() != 1)
    fail(KILN_ERR_IO, "labels file '", path, "' has shape ", shape_text(labels.dims),
         "; expected one dimension (magic 0x00000801)");
  if (labels.dtype != KILN_U8 && labels.dtype != KILN_I32)
    fail(KILN_ERR_IO, "labels file '", path, "' holds ", dtype_name(labels.dtype), " values; expected integers");
  Column column{KILN_I64, {}, labels.dims[0], {}};
  column.bytes.resize(size_t(column.count) * sizeof(int64_t));
  auto* out = reinterpret_cast<int64_t*>(column.bytes.data());
  for (int64_t i = 0; i < column.count; ++i)
    out[i] = labels.dtype == KILN_U8 ? int64_t(labels.data[size_t(i)])
                                     : int64_t(reinterpret_cast<const int32_t*>(labels.data.data())[i]);
  return column;
}

// Keeps the first `limit` items of `column` (all of them when it holds fewer).
void keep_first(Column& column, int64_t limit) {
  if (column.count <= limit) return;
  column.count = limit;
  column.bytes.resize(size_t(limit) * column.item_bytes());
}

ColumnSource build(kiln_runtime*, const kiln_attr* config) {
  const std::string images_path = config_string(config[0]), labels_path = config_string(config[1]);
  const int64_t limit = config[2].value.i;
  if (limit < 0) fail(KILN_ERR_INVALID_ARGUMENT, "'limit' is ", limit, "; expected 0 (every example) or more");
  IdxArray images = parse_idx(read_file(images_path, "images file"), images_path, "images file");
  const IdxArray labels = parse_idx(read_file(labels_path, "labels file"), labels_path, "labels file");
  Column targets = labels_column(labels, labels_path);
  if (images.dims[0] != targets.count)
    fail(KILN_ERR_IO, "images file '", images_path, "' holds ", images.dims[0], " items, labels file '", labels_path,
         "' holds ", targets.count, "; they must hold the same number");
  Column inputs{images.dtype, {images.dims.begin() + 1, images.dims.end()}, images.dims[0], std::move(images.data)};
  if (limit > 0) {
    keep_first(inputs, limit);
    keep_first(targets, limit);
  }
  ColumnSource source;
  source.fields.emplace_back("input", std::move(inputs));
  source.fields.emplace_back("target", std::move(targets));
  return source;
}

}  // namespace

kiln_status register_idx_source(kiln_registrar* r) {
  static const kiln_attr_spec config[] = {
      {kiln_attr_string("images", ""), 1, "path of the images IDX file (plain or gzip)"},
      {kiln_attr_string("labels", ""), 1, "path of the labels IDX file (plain or gzip)"},
      {kiln_attr_int("limit", 0), 0, "keep at most the first `limit` examples; 0: every example"},
  };
  const kiln_data_source_type type = column_source_type("idx", config, 3, build);
  return host->register_data_source(r, &type);
}

}  // namespace kiln_data
