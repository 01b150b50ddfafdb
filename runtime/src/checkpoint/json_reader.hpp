// A strict, pull-style JSON reader over text held in memory (RFC 8259 and
// nothing more: no comments, no trailing commas, no NaN). The caller walks
// the document value by value, so nothing is built that the caller does not
// keep: a hostile header cannot make the reader allocate a tree larger than
// the text. Strings are checked to be UTF-8 with every escape decoded
// (\uXXXX with surrogate pairs); numbers are checked against the grammar and
// handed back as their literal text. Containers nest at most kMaxJsonDepth
// deep. Syntax faults throw kiln::Error(Status::io) naming the byte offset.
//
//   JsonReader r(text);
//   r.begin_object();
//   std::string key;
//   while (r.next_member(&key)) { if (r.peek() == JsonKind::string) use(r.read_string()); else r.skip_value(); }
//   r.finish();
//
// Duplicate keys are not the reader's business: the caller knows which
// object it is reading and says so in its own message.
#pragma once

#include <bitset>
#include <cstddef>
#include <string>
#include <string_view>

namespace kiln::checkpoint {

inline constexpr int kMaxJsonDepth = 64;

enum class JsonKind { object, array, string, number, boolean, null };

// "an object", "an array", "a string", ... for messages.
const char* json_kind_name(JsonKind kind);

class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : text_(text) {}

  // The kind of the next value, judged by its first character.
  JsonKind peek();

  void begin_object();
  // Moves to the next member of the innermost object and reads its key;
  // false once the object's closing brace has been consumed.
  bool next_member(std::string* key);
  void begin_array();
  // Moves to the next item of the innermost array; false once its closing
  // bracket has been consumed.
  bool next_item();

  std::string read_string();
  // The literal text of a number, e.g. "-12", "3.5e2".
  std::string_view read_number();
  bool read_boolean();
  void read_null();
  // Reads and checks one value of any kind, containers included.
  void skip_value();
  // Checks that only whitespace follows.
  void finish();

 private:
  [[noreturn]] void fail(size_t at, std::string_view what) const;
  void skip_whitespace();
  void expect(char c, std::string_view what);
  void enter(bool is_object);
  // Handles the comma or the closing character of the innermost container.
  bool next_in_container(char close);
  void scan_string(std::string* out);
  void scan_escape(std::string* out);
  unsigned scan_hex4();
  void scan_literal(std::string_view word);

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  // Per open container: true until its first element has been read.
  std::bitset<kMaxJsonDepth> at_first_;
};

}  // namespace kiln::checkpoint
