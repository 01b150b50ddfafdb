#include "json_reader.hpp"

#include "kiln/error.hpp"
#include "utf8.hpp"

namespace kiln::checkpoint {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string* out, unsigned code_point) {
  if (code_point < 0x80) {
    out->push_back(char(code_point));
  } else if (code_point < 0x800) {
    out->push_back(char(0xc0 | (code_point >> 6)));
    out->push_back(char(0x80 | (code_point & 0x3f)));
  } else if (code_point < 0x10000) {
    out->push_back(char(0xe0 | (code_point >> 12)));
    out->push_back(char(0x80 | ((code_point >> 6) & 0x3f)));
    out->push_back(char(0x80 | (code_point & 0x3f)));
  } else {
    out->push_back(char(0xf0 | (code_point >> 18)));
    out->push_back(char(0x80 | ((code_point >> 12) & 0x3f)));
    out->push_back(char(0x80 | ((code_point >> 6) & 0x3f)));
    out->push_back(char(0x80 | (code_point & 0x3f)));
  }
}

}  // namespace

const char* json_kind_name(JsonKind kind) {
  switch (kind) {
    case JsonKind::object: return "an object";
    case JsonKind::array: return "an array";
    case JsonKind::string: return "a string";
    case JsonKind::number: return "a number";
    case JsonKind::boolean: return "a boolean";
    case JsonKind::null: return "null";
  }
  return "?";
}

void JsonReader::fail(size_t at, std::string_view what) const {
  throw_error(Status::io, str_cat("invalid JSON at byte ", at, ": ", what));
}

void JsonReader::skip_whitespace() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
    ++pos_;
  }
}

void JsonReader::expect(char c, std::string_view what) {
  skip_whitespace();
  if (pos_ >= text_.size()) fail(pos_, str_cat("the text ends where ", what, " should be"));
  if (text_[pos_] != c) fail(pos_, str_cat("expected ", what));
  ++pos_;
}

JsonKind JsonReader::peek() {
  skip_whitespace();
  if (pos_ >= text_.size()) fail(pos_, "the text ends where a value should be");
  switch (text_[pos_]) {
    case '{': return JsonKind::object;
    case '[': return JsonKind::array;
    case '"': return JsonKind::string;
    case 't':
    case 'f': return JsonKind::boolean;
    case 'n': return JsonKind::null;
    default:
      if (text_[pos_] == '-' || is_digit(text_[pos_])) return JsonKind::number;
      fail(pos_, "expected a value");
  }
}

void JsonReader::enter(bool is_object) {
  if (depth_ == kMaxJsonDepth) fail(pos_, str_cat("containers nest deeper than ", kMaxJsonDepth, " levels"));
  expect(is_object ? '{' : '[', is_object ? "'{'" : "'['");
  at_first_[size_t(depth_++)] = true;
}

void JsonReader::begin_object() { enter(true); }
void JsonReader::begin_array() { enter(false); }

bool JsonReader::next_in_container(char close) {
  skip_whitespace();
  if (pos_ < text_.size() && text_[pos_] == close) {
    ++pos_;
    --depth_;
    return false;
  }
  const size_t level = size_t(depth_ - 1);
  if (!at_first_[level]) expect(',', close == '}' ? "',' or '}'" : "',' or ']'");
  at_first_[level] = false;
  return true;
}

bool JsonReader::next_member(std::string* key) {
  if (!next_in_container('}')) return false;
  skip_whitespace();
  if (pos_ >= text_.size() || text_[pos_] != '"') fail(pos_, "expected a string key");
  key->clear();
  scan_string(key);
  expect(':', "':' after an object key");
  return true;
}

bool JsonReader::next_item() { return next_in_container(']'); }

std::string JsonReader::read_string() {
  std::string out;
  skip_whitespace();
  if (pos_ >= text_.size() || text_[pos_] != '"') fail(pos_, "expected a string");
  scan_string(&out);
  return out;
}

// `out` may be null: the string is then only checked.
void JsonReader::scan_string(std::string* out) {
  const size_t start = pos_++;
  for (;;) {
    if (pos_ >= text_.size()) fail(start, "a string is not terminated");
    const unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c == '"') {
      ++pos_;
      return;
    }
    if (c == '\\') {
      scan_escape(out);
    } else if (c < 0x20) {
      fail(pos_, "a control character inside a string must be escaped");
    } else {
      const size_t n = utf8_sequence_length(text_, pos_);
      if (n == 0) fail(pos_, "a string is not valid UTF-8");
      if (out) out->append(text_.substr(pos_, n));
      pos_ += n;
    }
  }
}

void JsonReader::scan_escape(std::string* out) {
  const size_t start = pos_++;
  if (pos_ >= text_.size()) fail(start, "a string is not terminated");
  const char c = text_[pos_++];
  char plain;
  switch (c) {
    case '"': plain = '"'; break;
    case '\\': plain = '\\'; break;
    case '/': plain = '/'; break;
    case 'b': plain = '\b'; break;
    case 'f': plain = '\f'; break;
    case 'n': plain = '\n'; break;
    case 'r': plain = '\r'; break;
    case 't': plain = '\t'; break;
    case 'u': {
      unsigned code_point = scan_hex4();
      if (code_point >= 0xdc00 && code_point <= 0xdfff)
        fail(start, "a low surrogate escape without a high one before it");
      if (code_point >= 0xd800 && code_point <= 0xdbff) {
        if (text_.substr(pos_, 2) != "\\u") fail(start, "a high surrogate escape not followed by a low one");
        pos_ += 2;
        const unsigned low = scan_hex4();
        if (low < 0xdc00 || low > 0xdfff) fail(start, "a high surrogate escape not followed by a low one");
        code_point = 0x10000 + ((code_point - 0xd800) << 10) + (low - 0xdc00);
      }
      if (out) append_utf8(out, code_point);
      return;
    }
    default: fail(start, "an unknown escape sequence");
  }
  if (out) out->push_back(plain);
}

unsigned JsonReader::scan_hex4() {
  unsigned value = 0;
  for (int i = 0; i < 4; ++i) {
    const int digit = pos_ < text_.size() ? hex_value(text_[pos_]) : -1;
    if (digit < 0) fail(pos_, "\\u must be followed by four hexadecimal digits");
    value = value * 16 + unsigned(digit);
    ++pos_;
  }
  return value;
}

std::string_view JsonReader::read_number() {
  skip_whitespace();
  const size_t start = pos_;
  const auto digits = [&](std::string_view what) {
    if (pos_ >= text_.size() || !is_digit(text_[pos_])) fail(pos_, str_cat("expected a digit ", what));
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
  };
  if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
  if (pos_ < text_.size() && text_[pos_] == '0') {
    ++pos_;
    if (pos_ < text_.size() && is_digit(text_[pos_])) fail(start, "a number has a leading zero");
  } else {
    digits("in a number");
  }
  if (pos_ < text_.size() && text_[pos_] == '.') {
    ++pos_;
    digits("after a decimal point");
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    digits("in an exponent");
  }
  return text_.substr(start, pos_ - start);
}

void JsonReader::scan_literal(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) fail(pos_, "expected a value");
  pos_ += word.size();
}

bool JsonReader::read_boolean() {
  skip_whitespace();
  const bool value = pos_ < text_.size() && text_[pos_] == 't';
  scan_literal(value ? "true" : "false");
  return value;
}

void JsonReader::read_null() {
  skip_whitespace();
  scan_literal("null");
}

void JsonReader::skip_value() {
  switch (peek()) {
    case JsonKind::object: {
      begin_object();
      std::string key;
      while (next_member(&key)) skip_value();
      return;
    }
    case JsonKind::array:
      begin_array();
      while (next_item()) skip_value();
      return;
    case JsonKind::string: scan_string(nullptr); return;
    case JsonKind::number: read_number(); return;
    case JsonKind::boolean: read_boolean(); return;
    case JsonKind::null: read_null(); return;
  }
}

void JsonReader::finish() {
  skip_whitespace();
  if (pos_ != text_.size()) fail(pos_, "unexpected text after the end of the value");
}

}  // namespace kiln::checkpoint
