// write_safetensors: checks what it is given, builds the header JSON (data
// in the order given, padded with spaces so the data starts 8-byte aligned,
// as the reference writer does), then writes through AtomicFileWriter.
#include "atomic_file.hpp"
#include "json_writer.hpp"
#include "kiln/checkpoint/safetensors.hpp"
#include "kiln/error.hpp"
#include "repeated_name.hpp"
#include "utf8.hpp"

namespace kiln::checkpoint {
namespace {

template <class... Parts>
[[noreturn]] void refuse(const std::string& path, const Parts&... parts) {
  throw_error(Status::invalid_argument, str_cat("cannot save '", path, "': ", parts...));
}

// The byte size of each tensor, after checking everything the header and
// the reader will require of it.
std::vector<uint64_t> checked_sizes(const std::string& path, const std::vector<TensorBytes>& tensors,
                                    const Metadata& metadata) {
  std::vector<uint64_t> sizes;
  sizes.reserve(tensors.size());
  for (const TensorBytes& t : tensors) {
    if (t.name == "__metadata__") refuse(path, "'__metadata__' is reserved and cannot name a tensor");
    if (!is_valid_utf8(t.name)) refuse(path, "a tensor name is not valid UTF-8");
    uint64_t bytes = dtype_size(t.dtype);
    for (int64_t d : t.shape) {
      if (d < 0) refuse(path, "tensor '", t.name, "' has a negative dimension in shape ", to_string(t.shape));
      if (__builtin_mul_overflow(bytes, uint64_t(d), &bytes)) {
        refuse(path, "tensor '", t.name, "' of shape ", to_string(t.shape), " is too large");
      }
    }
    if (bytes > 0 && t.data == nullptr) refuse(path, "tensor '", t.name, "' has no data");
    sizes.push_back(bytes);
  }
  if (const auto twice = find_repeated_name(tensors, [](const TensorBytes& t) { return std::string_view(t.name); })) {
    refuse(path, "tensor name '", *twice, "' appears twice");
  }
  for (const auto& [key, value] : metadata) {
    if (!is_valid_utf8(key) || !is_valid_utf8(value)) refuse(path, "a metadata entry is not valid UTF-8");
  }
  if (const auto twice = find_repeated_name(metadata, [](const auto& kv) { return std::string_view(kv.first); })) {
    refuse(path, "metadata key '", *twice, "' appears twice");
  }
  return sizes;
}

std::string header_json(const std::vector<TensorBytes>& tensors, const std::vector<uint64_t>& sizes,
                        const Metadata& metadata) {
  std::string json = "{";
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    for (size_t i = 0; i < metadata.size(); ++i) {
      if (i) json += ',';
      append_json_string(&json, metadata[i].first);
      json += ':';
      append_json_string(&json, metadata[i].second);
    }
    json += '}';
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorBytes& t = tensors[i];
    if (i || !metadata.empty()) json += ',';
    append_json_string(&json, t.name);
    json += str_cat(":{\"dtype\":\"", safetensors_dtype_name(t.dtype), "\",\"shape\":[");
    for (int d = 0; d < t.shape.rank(); ++d) json += str_cat(d ? "," : "", t.shape[d]);
    json += str_cat("],\"data_offsets\":[", offset, ",", offset + sizes[i], "]}");
    offset += sizes[i];
  }
  json += '}';
  json.append((8 - json.size() % 8) % 8, ' ');
  return json;
}

}  // namespace

void write_safetensors(const std::string& path, const std::vector<TensorBytes>& tensors, const Metadata& metadata) {
  const std::vector<uint64_t> sizes = checked_sizes(path, tensors, metadata);
  const std::string json = header_json(tensors, sizes, metadata);
  if (json.size() > kMaxHeaderBytes) {
    refuse(path, "the header would be ", json.size(), " bytes, above the limit of ", kMaxHeaderBytes);
  }
  unsigned char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(uint64_t(json.size()) >> (8 * i));

  AtomicFileWriter file(path);
  file.write(length, sizeof length);
  file.write(json.data(), json.size());
  for (size_t i = 0; i < tensors.size(); ++i) file.write(tensors[i].data, size_t(sizes[i]));
  file.commit();
}

}  // namespace kiln::checkpoint
