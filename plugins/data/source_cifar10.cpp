// "cifar10": the CIFAR-10 binary batches. Each record is one label byte
// (0..9) and a 3x32x32 image, channel-major. input: u8[3,32,32]; target: i64.
#include "cifar10_format.hpp"
#include "columns.hpp"
#include "file_bytes.hpp"
#include "sources.hpp"

namespace kiln_data {
namespace {

// "a.bin:b.bin" -> {"a.bin", "b.bin"}
std::vector<std::string> split_paths(const std::string& list) {
  std::vector<std::string> paths;
  size_t start = 0;
  for (size_t end; (end = list.find(':', start)) != std::string::npos; start = end + 1)
    paths.push_back(list.substr(start, end - start));
  paths.push_back(list.substr(start));
  return paths;
}

ColumnSource build(kiln_runtime*, const kiln_attr* config) {
  const std::string files = config_string(config[0]);
  if (files.empty()) fail(KILN_ERR_INVALID_ARGUMENT, "'files' is empty; expected paths separated by ':'");
  Column images{KILN_U8, {3, kCifar10Side, kCifar10Side}, 0, {}}, labels{KILN_I64, {}, 0, {}};
  for (const std::string& path : split_paths(files))
    append_cifar10_records(read_file(path, "CIFAR-10 batch"), path, images, labels);
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
