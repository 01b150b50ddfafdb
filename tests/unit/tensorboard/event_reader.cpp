#include "tensorboard/event_reader.hpp"

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "kiln/util/crc32c.hpp"

namespace kiln::test {
namespace {

[[noreturn]] void fail(const std::string& what, size_t at) {
  throw std::runtime_error(what + " at byte " + std::to_string(at));
}

uint64_t little_endian(const std::string& bytes, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= uint64_t(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return v;
}

// TensorFlow's masking, undone: rotate left by 15 after removing the delta.
uint32_t unmask(uint32_t masked) {
  const uint32_t rotated = masked - 0xA282EAD8u;
  return (rotated << 15) | (rotated >> 17);
}

// A protobuf message read field by field.
class Fields {
 public:
  explicit Fields(std::string bytes) : bytes_(std::move(bytes)) {}
  bool done() const { return at_ >= bytes_.size(); }

  // The next field's number and wire type.
  void next(uint32_t* field, uint32_t* type) {
    const uint64_t key = varint();
    *field = uint32_t(key >> 3);
    *type = uint32_t(key & 7);
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ >= bytes_.size()) fail("a varint runs past the message", at_);
      const auto byte = static_cast<unsigned char>(bytes_[at_++]);
      v |= uint64_t(byte & 0x7F) << shift;
      if (!(byte & 0x80)) return v;
    }
    fail("a varint longer than 10 bytes", at_);
  }
  uint64_t fixed(size_t width) {
    if (at_ + width > bytes_.size()) fail("a fixed-width field runs past the message", at_);
    const uint64_t v = little_endian(bytes_, at_, width);
    at_ += width;
    return v;
  }
  std::string bytes() {
    const uint64_t n = varint();
    if (n > bytes_.size() - at_) fail("a length-delimited field runs past the message", at_);
    std::string v = bytes_.substr(at_, n);
    at_ += n;
    return v;
  }
  size_t at() const { return at_; }

 private:
  std::string bytes_;
  size_t at_ = 0;
};

void expect_type(uint32_t type, uint32_t expected, uint32_t field, size_t at) {
  if (type != expected)
    fail("field " + std::to_string(field) + " has wire type " + std::to_string(type) + ", expected " +
             std::to_string(expected),
         at);
}

ReadScalar decode_value(std::string bytes) {
  ReadScalar s;
  Fields f(std::move(bytes));
  while (!f.done()) {
    uint32_t field = 0, type = 0;
    f.next(&field, &type);
    if (field == 1) {
      expect_type(type, 2, field, f.at());
      s.tag = f.bytes();
    } else if (field == 2) {
      expect_type(type, 5, field, f.at());
      const auto bits = uint32_t(f.fixed(4));
      std::memcpy(&s.value, &bits, 4);
    } else {
      fail("Summary.Value field " + std::to_string(field) + " that kiln does not write", f.at());
    }
  }
  return s;
}

std::vector<ReadScalar> decode_summary(std::string bytes) {
  std::vector<ReadScalar> values;
  Fields f(std::move(bytes));
  while (!f.done()) {
    uint32_t field = 0, type = 0;
    f.next(&field, &type);
    if (field != 1) fail("Summary field " + std::to_string(field) + " that kiln does not write", f.at());
    expect_type(type, 2, field, f.at());
    values.push_back(decode_value(f.bytes()));
  }
  return values;
}

ReadEvent decode_event(std::string bytes) {
  ReadEvent e;
  Fields f(std::move(bytes));
  while (!f.done()) {
    uint32_t field = 0, type = 0;
    f.next(&field, &type);
    if (field == 1) {
      expect_type(type, 1, field, f.at());
      const uint64_t bits = f.fixed(8);
      std::memcpy(&e.wall_time, &bits, 8);
    } else if (field == 2) {
      expect_type(type, 0, field, f.at());
      e.step = int64_t(f.varint());
    } else if (field == 3) {
      expect_type(type, 2, field, f.at());
      e.file_version = f.bytes();
    } else if (field == 5) {
      expect_type(type, 2, field, f.at());
      e.scalars = decode_summary(f.bytes());
    } else {
      fail("Event field " + std::to_string(field) + " that kiln does not write", f.at());
    }
  }
  return e;
}

}  // namespace

std::vector<ReadEvent> read_events(const std::string& bytes) {
  std::vector<ReadEvent> events;
  size_t at = 0;
  while (at < bytes.size()) {
    if (bytes.size() - at < 12) fail("a record header shorter than 12 bytes", at);
    const uint64_t length = little_endian(bytes, at, 8);
    if (unmask(uint32_t(little_endian(bytes, at + 8, 4))) != crc32c(bytes.data() + at, 8))
      fail("the length's checksum does not match", at);
    at += 12;
    if (length > bytes.size() - at || bytes.size() - at - length < 4) fail("a record runs past the file", at);
    if (unmask(uint32_t(little_endian(bytes, at + length, 4))) != crc32c(bytes.data() + at, length))
      fail("the payload's checksum does not match", at);
    events.push_back(decode_event(bytes.substr(at, length)));
    at += length + 4;
  }
  return events;
}

std::vector<ReadEvent> read_event_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return read_events(bytes.str());
}

}  // namespace kiln::test
