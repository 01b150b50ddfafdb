// "cifar10": the CIFAR-10 binary batches. Each record is one label byte
// (0..9) and a 3x32x32 image, channel-major. input: u8[3,32,32]; target: i64.
#include "columns.hpp"
#include "file_bytes.hpp"
#include "sources.hpp"

namespace kiln_data {
namespace {

constexpr size_t kImageBytes = 3 * 32 * 32;
constexpr size_t kRecordBytes = 1 + kImageBytes;
constexpr int kNumClasses = 10;

// "a.bin:b.bin" -> {"a.bin", "b.bin"}
std::vector<std::string> split_paths(const std::string& list) {
  std::vector<std::string> paths;
  size_t start = 0;
  for (size_t end; (end = list.find(':', start)) != std::string::npos; start = end + 1)
    paths.push_back(list.substr(start, end - start));
  paths.push_back(list.substr(start));
  return paths;
}

void append_batch(const std::string& path, Column& images, Column& labels) {
  const Bytes file = read_file(path, "CIFAR-10 batch");
  if (file.empty() || file.size() % kRecordBytes != 0)
    fail(KILN_ERR_IO, "CIFAR-10 batch '", path, "' holds ", file.size(), " bytes, not a positive multiple of ",
         kRecordBytes, " (1 label byte + ", kImageBytes, " image bytes per record)");
  const size_t records = file.size() / kRecordBytes;
  for (size_t r = 0; r < records; ++r) {
    const unsigned char* record = file.data() + r * kRecordBytes;
    if (record[0] >= kNumClasses)
      fail(KILN_ERR_IO, "CIFAR-10 batch '", path, "' is corrupt: record ", r, " has label ", int(record[0]),
           ", expected 0..", kNumClasses - 1);
    const int64_t label = record[0];
    const auto* label_bytes = reinterpret_cast<const unsigned char*>(&label);
    labels.bytes.insert(labels.bytes.end(), label_bytes, label_bytes + sizeof label);
    images.bytes.insert(images.bytes.end(), record + 1, record + kRecordBytes);
  }
  images.count += int64_t(records);
  labels.count += int64_t(records);
}

ColumnSource build(kiln_runtime*, const kiln_attr* config) {
  const std::string files = config_string(config[0]);
  if (files.empty()) fail(KILN_ERR_INVALID_ARGUMENT, "'files' is empty; expected paths separated by ':'");
  Column images{KILN_U8, {3, 32, 32}, 0, {}}, labels{KILN_I64, {}, 0, {}};
  for (const std::string& path : split_paths(files)) append_batch(path, images, labels);
  ColumnSource source;
  source.fields.emplace_back("input", std::move(images));
  source.fields.emplace_back("target", std::move(labels));
  return source;
}

}  // namespace

kiln_status register_cifar10_source(kiln_registrar* r) {
  static const kiln_attr_spec config[] = {
      {kiln_attr_string("files", ""), 1, "paths of the binary batches, separated by ':'"},
  };
  const kiln_data_source_type type = column_source_type("cifar10", config, 1, build);
  return host->register_data_source(r, &type);
}

}  // namespace kiln_data
