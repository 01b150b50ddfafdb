// Reading the records of a CIFAR-10 binary batch.
#include "cifar10_format.hpp"

namespace kiln_data {
namespace {

constexpr size_t kImageBytes = 3 * kCifar10Side * kCifar10Side;
constexpr size_t kRecordBytes = 1 + kImageBytes;
constexpr int kNumClasses = 10;

}  // namespace

void append_cifar10_records(const Bytes& file, const std::string& path, Column& images, Column& labels) {
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

}  // namespace kiln_data
