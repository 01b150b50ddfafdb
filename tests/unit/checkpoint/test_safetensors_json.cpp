// The header's JSON is read strictly: every syntax fault is refused with the
// byte where it is, before anything about its meaning; strings are UTF-8
// with every escape decoded.
#include <catch2/catch.hpp>

#include "checkpoint_files.hpp"
#include "kiln/checkpoint/safetensors.hpp"

using namespace kiln;
using namespace kiln::checkpoint;
using kiln::test::file_image;
using kiln::test::require_refused;

namespace {

std::string nested_arrays(int depth) { return std::string(size_t(depth), '[') + std::string(size_t(depth), ']'); }

std::string metadata_value(std::string_view json_value) {
  return std::string(R"({"__metadata__":{"k":)").append(json_value).append("}}");
}

}  // namespace

TEST_CASE("JSON syntax faults are refused with their byte offset", "[checkpoint][json]") {
  const auto [header, reason] = GENERATE(table<std::string, std::string>({
      {R"({"a":1,})", "invalid JSON at byte 7: expected a string key"},
      {R"({'a':1})", "invalid JSON at byte 1: expected a string key"},
      {R"({"a" 1})", "invalid JSON at byte 5: expected ':' after an object key"},
      {R"({"a":1 "b":2})", "invalid JSON at byte 7: expected ',' or '}'"},
      {R"({"t":[1 2]})", "invalid JSON at byte 8: expected ',' or ']'"},
      {R"({"t":[1,]})", "invalid JSON at byte 8: expected a value"},
      {R"({"__metadata__":{}} x)", "invalid JSON at byte 20: unexpected text after the end of the value"},
      {"", "invalid JSON at byte 0: the text ends where a value should be"},
      {"   ", "invalid JSON at byte 3: the text ends where a value should be"},
      {R"({"a":)", "invalid JSON at byte 5: the text ends where a value should be"},
      {R"({"a":1)", "invalid JSON at byte 6: the text ends where ',' or '}' should be"},
      {R"({"a")", "invalid JSON at byte 4: the text ends where ':' after an object key should be"},
      {R"({"__metadata__":{"k":"v)", "invalid JSON at byte 21: a string is not terminated"},
      {"{\"__metadata__\":{\"k\":\"a\x01z\"}}",
       "invalid JSON at byte 23: a control character inside a string must be escaped"},
      {"{\"__metadata__\":{\"k\":\"a\tz\"}}", "a control character inside a string must be escaped"},
      {metadata_value(R"("\q")"), "invalid JSON at byte 22: an unknown escape sequence"},
      {metadata_value(R"("\u12G4")"), "\\u must be followed by four hexadecimal digits"},
      {metadata_value(R"("\u12")"), "\\u must be followed by four hexadecimal digits"},
      {metadata_value(R"("\ud83d")"), "a high surrogate escape not followed by a low one"},
      {metadata_value(R"("\ud83d\u0041")"), "a high surrogate escape not followed by a low one"},
      {metadata_value(R"("\ude00\ud83d")"), "a low surrogate escape without a high one before it"},
      {metadata_value("\"\xc3\x28\""), "invalid JSON at byte 22: a string is not valid UTF-8"},
      {metadata_value("\"\xc0\xaf\""), "a string is not valid UTF-8"},          // overlong '/'
      {metadata_value("\"\xe0\x80\xaf\""), "a string is not valid UTF-8"},      // overlong, 3 bytes
      {metadata_value("\"\xed\xa0\x80\""), "a string is not valid UTF-8"},      // an encoded surrogate
      {metadata_value("\"\xf4\x90\x80\x80\""), "a string is not valid UTF-8"},  // above U+10FFFF
      {metadata_value("\"\xe2\x82\""), "a string is not valid UTF-8"},          // cut short
      {metadata_value("\"\x80\""), "a string is not valid UTF-8"},              // a stray continuation byte
      {metadata_value("\"\xff\""), "a string is not valid UTF-8"},
      {"\xef\xbb\xbf{}", "invalid JSON at byte 0: expected a value"},  // a byte order mark
      {R"({"t":[01]})", "invalid JSON at byte 6: a number has a leading zero"},
      {R"({"t":[-]})", "expected a digit in a number"},
      {R"({"t":[1.]})", "expected a digit after a decimal point"},
      {R"({"t":[1e]})", "expected a digit in an exponent"},
      {R"({"t":[1e+]})", "expected a digit in an exponent"},
      {R"({"t":[+1]})", "invalid JSON at byte 6: expected a value"},
      {R"({"t":[.5]})", "expected a value"},
      {R"({"t":tru})", "invalid JSON at byte 5: expected a value"},
      {R"({"t":nul})", "expected a value"},
      {R"({"t":NaN})", "expected a value"},
      {R"({"t":{} /* comment */})", "expected ',' or '}'"},
      {R"({"t":[1,2],})", "expected a string key"},
      {std::string(R"({"t":)") + nested_arrays(64) + "}",
       "invalid JSON at byte 68: containers nest deeper than 64 levels"},
  }));
  INFO("header: " << header);
  require_refused(file_image(header), reason);
}

TEST_CASE("a syntax fault is reported even after a fault of meaning", "[checkpoint][json]") {
  require_refused(file_image(R"({"t":{"dtype":"NOPE"}, "u": [})"), "invalid JSON at byte 29: expected a value");
}

TEST_CASE("nesting up to the depth limit is JSON", "[checkpoint][json]") {
  require_refused(file_image(std::string(R"({"__metadata__":{"k":)") + nested_arrays(62) + "}}"),
                  "'__metadata__' entry 'k' must be a string, got an array");
  require_refused(file_image(std::string(R"({"__metadata__":{"k":)") + nested_arrays(63) + "}}"),
                  "containers nest deeper than 64 levels");
}

TEST_CASE("true, false and null are JSON but not allowed in a header", "[checkpoint][json]") {
  require_refused(file_image(metadata_value("true")), "'__metadata__' entry 'k' must be a string, got a boolean");
  require_refused(file_image(metadata_value("false")), "'__metadata__' entry 'k' must be a string, got a boolean");
  require_refused(file_image(R"({"t":null})"), "tensor 't' must be an object, got null");
}

TEST_CASE("every escape is decoded and any JSON whitespace is accepted", "[checkpoint][json]") {
  kiln::test::ScratchDir dir;
  const std::string path = dir.file("escapes.safetensors");
  const std::string header =
      " \t\r\n{ \"__metadata__\" :\n{\"k\\u00e9y\"\t:\r"
      R"("\"\\\/\b\f\n\r\t\u0000\u00e9\u20AC\ud83d\ude00\uD834\uDD1E")"
      " , \"raw\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}\n}\n";
  kiln::test::write_file(path, file_image(header));
  const Metadata expected = {
      {"k\xc3\xa9y", std::string("\"\\/\b\f\n\r\t") + '\0' + "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf0\x9d\x84\x9e"},
      {"raw", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"},
  };
  CHECK(read_header(path).metadata == expected);
}
