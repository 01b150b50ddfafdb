#include "event_encoding.hpp"

#include <bit>

#include "kiln/util/crc32c.hpp"

namespace kiln::tensorboard {
namespace {

// Wire types of the protobuf encoding.
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Field numbers of event.proto (Event) and summary.proto (Summary, Summary.Value).
constexpr uint32_t kEventWallTime = 1;
constexpr uint32_t kEventStep = 2;
constexpr uint32_t kEventFileVersion = 3;
constexpr uint32_t kEventSummary = 5;
constexpr uint32_t kSummaryValue = 1;
constexpr uint32_t kValueTag = 1;
constexpr uint32_t kValueSimpleValue = 2;

void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    *out += char((v & 0x7F) | 0x80);
    v >>= 7;
  }
  *out += char(v);
}

void put_key(std::string* out, uint32_t field, WireType type) { put_varint(out, (uint64_t(field) << 3) | type); }

template <typename Bits>
void put_little_endian(std::string* out, Bits bits) {
  for (size_t i = 0; i < sizeof bits; ++i) *out += char((bits >> (8 * i)) & 0xFF);
}

void put_double(std::string* out, uint32_t field, double v) {
  put_key(out, field, kFixed64);
  put_little_endian(out, std::bit_cast<uint64_t>(v));
}

void put_float(std::string* out, uint32_t field, float v) {
  put_key(out, field, kFixed32);
  put_little_endian(out, std::bit_cast<uint32_t>(v));
}

// int64 fields are varints of the two's-complement value (10 bytes when negative).
void put_int64(std::string* out, uint32_t field, int64_t v) {
  put_key(out, field, kVarint);
  put_varint(out, uint64_t(v));
}

void put_bytes(std::string* out, uint32_t field, std::string_view bytes) {
  put_key(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out->append(bytes);
}

}  // namespace

std::string frame_record(const std::string& payload) {
  std::string record;
  record.reserve(payload.size() + 16);
  put_little_endian(&record, uint64_t(payload.size()));
  put_little_endian(&record, masked_crc32c(record.data(), 8));
  record += payload;
  put_little_endian(&record, masked_crc32c(payload.data(), payload.size()));
  return record;
}

std::string encode_file_version_event(double wall_time, std::string_view version) {
  std::string event;
  put_double(&event, kEventWallTime, wall_time);
  put_bytes(&event, kEventFileVersion, version);
  return event;
}

std::string encode_scalars_event(double wall_time, int64_t step, std::span<const Scalar> scalars) {
  std::string summary;
  for (const Scalar& s : scalars) {
    std::string value;
    put_bytes(&value, kValueTag, s.tag);
    put_float(&value, kValueSimpleValue, float(s.value));
    put_bytes(&summary, kSummaryValue, value);
  }
  std::string event;
  put_double(&event, kEventWallTime, wall_time);
  put_int64(&event, kEventStep, step);
  put_bytes(&event, kEventSummary, summary);
  return event;
}

}  // namespace kiln::tensorboard
