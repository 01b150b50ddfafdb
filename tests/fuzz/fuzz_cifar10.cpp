// libFuzzer target: arbitrary bytes as a CIFAR-10 binary batch, plain or
// gzip-compressed, through the reader the "cifar10" source uses. The result
// is a refusal naming the file or one label and one 3x32x32 image per record.
#include "cifar10_format.hpp"
#include "fuzz_data_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln_fuzz;
  parse_or_refuse([&] {
    const kiln_data::Bytes bytes = kiln_data::decode_file_bytes({data, data + size}, kPath, "CIFAR-10 batch");
    kiln_data::Column images{KILN_U8, {3, kiln_data::kCifar10Side, kiln_data::kCifar10Side}, 0, {}};
    kiln_data::Column labels{KILN_I64, {}, 0, {}};
    kiln_data::append_cifar10_records(bytes, kPath, images, labels);
    require(images.count == labels.count && images.count > 0);
    require(images.bytes.size() == size_t(images.count) * images.item_bytes());
    for (int64_t i = 0; i < labels.count; ++i) require(labels.bytes[size_t(i) * 8] < 10);
  });
  return 0;
}
