#include "store_protocol.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "kiln/error.hpp"

namespace kiln::dist::wire {

const char* op_name(Op op) {
  switch (op) {
    case Op::hello: return "HELLO";
    case Op::bye: return "BYE";
    case Op::set: return "SET";
    case Op::get: return "GET";
    case Op::try_get: return "TRY_GET";
    case Op::wait: return "WAIT";
    case Op::add: return "ADD";
    case Op::compare_set: return "COMPARE_SET";
    case Op::remove: return "DELETE";
    case Op::departed: return "DEPARTED";
  }
  return "unknown";
}

// ---- writing -------------------------------------------------------------------

FrameWriter::FrameWriter(uint8_t first) {
  bytes_.assign(kLengthBytes, '\0');
  u8(first);
}

FrameWriter& FrameWriter::u8(uint8_t v) {
  bytes_.push_back(char(v));
  return *this;
}

FrameWriter& FrameWriter::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes_.push_back(char((v >> (8 * i)) & 0xff));
  return *this;
}

FrameWriter& FrameWriter::u64(uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes_.push_back(char((v >> (8 * i)) & 0xff));
  return *this;
}

FrameWriter& FrameWriter::str(std::string_view s) {
  KILN_CHECK(s.size() <= std::numeric_limits<uint32_t>::max(), Status::invalid_argument,
             "store: a key or value of ", s.size(), " bytes is longer than a store message can carry (4 GiB)");
  u32(uint32_t(s.size()));
  bytes_.append(s);
  return *this;
}

std::string FrameWriter::take() {
  const size_t body = bytes_.size() - kLengthBytes;
  KILN_CHECK(body <= std::numeric_limits<uint32_t>::max(), Status::invalid_argument, "store: a message of ", body,
             " bytes is longer than a store message can be (4 GiB)");
  for (size_t i = 0; i < kLengthBytes; ++i) bytes_[i] = char((body >> (8 * i)) & 0xff);
  return std::move(bytes_);
}

std::string encode_request(const Request& r) {
  FrameWriter w(uint8_t(r.op));
  switch (r.op) {
    case Op::hello: w.u32(r.version).i32(r.rank); break;
    case Op::bye:
    case Op::departed: break;
    case Op::set: w.str(r.key).str(r.value); break;
    case Op::get: w.str(r.key).u64(r.timeout_ms); break;
    case Op::try_get:
    case Op::remove: w.str(r.key); break;
    case Op::wait:
      KILN_CHECK(r.keys.size() <= std::numeric_limits<uint32_t>::max(), Status::invalid_argument,
                 "store wait: too many keys (", r.keys.size(), ")");
      w.u32(uint32_t(r.keys.size()));
      for (const std::string& key : r.keys) w.str(key);
      w.u64(r.timeout_ms);
      break;
    case Op::add: w.str(r.key).i64(r.delta); break;
    case Op::compare_set: w.str(r.key).str(r.expected).str(r.value); break;
  }
  return w.take();
}

// ---- reading -------------------------------------------------------------------

uint32_t decode_length(const unsigned char* prefix) {
  return uint32_t(prefix[0]) | uint32_t(prefix[1]) << 8 | uint32_t(prefix[2]) << 16 | uint32_t(prefix[3]) << 24;
}

std::string_view FrameReader::take(size_t n, const char* what) {
  KILN_CHECK(n <= rest_.size(), Status::invalid_argument, "the message ends inside its ", what, " (", n,
             " bytes needed, ", rest_.size(), " left)");
  const std::string_view out = rest_.substr(0, n);
  rest_.remove_prefix(n);
  return out;
}

uint8_t FrameReader::u8(const char* what) { return uint8_t(take(1, what)[0]); }

uint32_t FrameReader::u32(const char* what) {
  const std::string_view b = take(4, what);
  return decode_length(reinterpret_cast<const unsigned char*>(b.data()));
}

uint64_t FrameReader::u64(const char* what) {
  const std::string_view b = take(8, what);
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | uint64_t(uint8_t(b[size_t(i)]));
  return v;
}

std::string FrameReader::str(const char* what) {
  const uint32_t n = u32(what);
  return std::string(take(n, what));
}

void FrameReader::expect_end(const char* message_name) const {
  KILN_CHECK(rest_.empty(), Status::invalid_argument, "the ", message_name, " message has ", rest_.size(),
             " bytes after its last field");
}

Request decode_request(std::string_view body) {
  FrameReader r(body);
  Request q;
  const uint8_t op = r.u8("opcode");
  KILN_CHECK(op >= uint8_t(Op::hello) && op <= uint8_t(Op::departed), Status::invalid_argument,
             "unknown opcode ", int(op), " (this server knows 1 to ", int(Op::departed), ")");
  q.op = Op(op);
  switch (q.op) {
    case Op::hello:
      q.version = r.u32("protocol version");
      q.rank = r.i32("rank");
      break;
    case Op::bye:
    case Op::departed: break;
    case Op::set:
      q.key = r.str("key");
      q.value = r.str("value");
      break;
    case Op::get:
      q.key = r.str("key");
      q.timeout_ms = r.u64("timeout");
      break;
    case Op::try_get:
    case Op::remove: q.key = r.str("key"); break;
    case Op::wait: {
      const uint32_t n = r.u32("key count");
      // Each key takes at least its 4-byte length: a count the message
      // cannot hold reserves nothing it does not have.
      q.keys.reserve(std::min<size_t>(n, r.left() / 4));
      for (uint32_t i = 0; i < n; ++i) q.keys.push_back(r.str("key"));
      q.timeout_ms = r.u64("timeout");
      break;
    }
    case Op::add:
      q.key = r.str("key");
      q.delta = r.i64("delta");
      break;
    case Op::compare_set:
      q.key = r.str("key");
      q.expected = r.str("expected value");
      q.value = r.str("desired value");
      break;
  }
  r.expect_end(op_name(q.op));
  return q;
}

std::string quoted(std::string_view bytes, size_t max_chars) {
  std::string out = "'";
  size_t shown = 0;
  for (const char c : bytes) {
    if (shown++ == max_chars) {
      out += str_cat("'... (", bytes.size(), " bytes)");
      return out;
    }
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\'' && c != '\\') {
      out.push_back(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", unsigned(u));
      out += hex;
    }
  }
  out.push_back('\'');
  return out;
}

}  // namespace kiln::dist::wire
