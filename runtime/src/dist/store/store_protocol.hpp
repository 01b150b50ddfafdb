// The rendezvous store's wire format, shared by the server and the client.
//
// Every message is a frame: a u32 little-endian length, then that many
// bytes. A request's bytes start with a u8 opcode, a reply's with a u8
// status; the fields follow. Integers are little-endian; a string is a u32
// length and its bytes (any bytes, NUL included).
//
//   request                 fields                           ok reply carries
//   HELLO        1          u32 version, i32 rank            u64 max_message_bytes
//   BYE          2          -                                -
//   SET          3          str key, str value               -
//   GET          4          str key, u64 timeout_ms          str value
//   TRY_GET      5          str key                          u8 found, [str value]
//   WAIT         6          u32 n, n x str key, u64 timeout_ms   -
//   ADD          7          str key, i64 delta               i64 value
//   COMPARE_SET  8          str key, str expected, str desired   str value
//   DELETE       9          str key                          u8 deleted
//   DEPARTED    10          -                                u32 n, n x i32 rank
//
// Reply statuses: ok; timeout (GET and WAIT only; carries u32 n, n x str:
// the keys still missing); error (str message; the connection goes on);
// fatal (str message; the server closes the connection after it).
//
// A connection carries one request at a time: the client sends the next
// request only after the reply to the previous one has arrived.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::dist::wire {

// Sent in HELLO: a server refuses a client of another version.
inline constexpr uint32_t kProtocolVersion = 1;
// Bytes of the length prefix in front of every frame.
inline constexpr size_t kLengthBytes = 4;

enum class Op : uint8_t {
  hello = 1,
  bye = 2,
  set = 3,
  get = 4,
  try_get = 5,
  wait = 6,
  add = 7,
  compare_set = 8,
  remove = 9,  // DELETE on the wire
  departed = 10,
};
const char* op_name(Op op);

enum class ReplyStatus : uint8_t { ok = 0, timeout = 1, error = 2, fatal = 3 };

// One request, decoded. Only the fields of its opcode are meaningful.
struct Request {
  Op op = Op::bye;
  uint32_t version = kProtocolVersion;  // hello
  int32_t rank = -1;                    // hello
  std::string key{};                      // set, get, try_get, add, compare_set, remove
  std::string value{};                    // set; compare_set: desired
  std::string expected{};                 // compare_set
  std::vector<std::string> keys{};        // wait
  int64_t delta = 0;                    // add
  uint64_t timeout_ms = 0;              // get, wait
};

// The whole frame, length prefix included.
std::string encode_request(const Request& request);
// `body` is a frame without its length prefix. Throws kiln::Error
// (Status::invalid_argument) naming what does not parse: an unknown opcode,
// a field cut short, bytes left over.
Request decode_request(std::string_view body);

// Builds one frame: the length prefix is filled in by take().
class FrameWriter {
 public:
  explicit FrameWriter(uint8_t first);
  FrameWriter& u8(uint8_t v);
  FrameWriter& u32(uint32_t v);
  FrameWriter& i32(int32_t v) { return u32(uint32_t(v)); }
  FrameWriter& u64(uint64_t v);
  FrameWriter& i64(int64_t v) { return u64(uint64_t(v)); }
  FrameWriter& str(std::string_view s);
  // The frame; throws Status::invalid_argument when it is longer than a u32
  // length can say.
  std::string take();

 private:
  std::string bytes_;
};

// Reads the fields of a frame body; every read checks that the bytes are
// there and throws Status::invalid_argument naming `what` when not. A
// string's declared length is checked against the bytes left before
// anything is allocated.
class FrameReader {
 public:
  explicit FrameReader(std::string_view body) : rest_(body) {}
  uint8_t u8(const char* what);
  uint32_t u32(const char* what);
  int32_t i32(const char* what) { return int32_t(u32(what)); }
  uint64_t u64(const char* what);
  int64_t i64(const char* what) { return int64_t(u64(what)); }
  std::string str(const char* what);
  size_t left() const { return rest_.size(); }
  // Throws when bytes are left over after the last field.
  void expect_end(const char* message_name) const;

 private:
  std::string_view take(size_t n, const char* what);
  std::string_view rest_;
};

// The frame length in the first kLengthBytes of `prefix`.
uint32_t decode_length(const unsigned char* prefix);

// A key or value for an error message: quoted, non-printable bytes as \xNN,
// cut after `max_chars` characters.
std::string quoted(std::string_view bytes, size_t max_chars = 64);

}  // namespace kiln::dist::wire
