// Each way a safetensors file can be wrong is refused with its own message
// naming the file; nothing is allocated beyond what the file holds.
#include <catch2/catch.hpp>

#include "checkpoint_files.hpp"
#include "kiln/checkpoint/safetensors.hpp"
#include "kiln/util/str_cat.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::checkpoint;
using kiln::test::file_image;
using kiln::test::require_refused;
using kiln::test::tensor_json;

namespace {

// An image whose 8-byte length says `length`, followed by `rest`.
std::string image_with_length(uint64_t length, std::string_view rest) {
  std::string image(8, '\0');
  for (int i = 0; i < 8; ++i) image[size_t(i)] = char((length >> (8 * i)) & 0xff);
  return image.append(rest);
}

// A header holding one tensor entry, and `data_size` bytes of data.
std::string one_tensor(std::string_view dtype, std::string_view shape, uint64_t begin, uint64_t end, size_t data_size) {
  return file_image(str_cat("{", tensor_json("t", dtype, shape, begin, end), "}"), std::string(data_size, '\0'));
}

}  // namespace

TEST_CASE("a file shorter than the length prefix is truncated", "[checkpoint][malformed]") {
  require_refused("", "the file is truncated: 0 bytes");
  require_refused(std::string("\x10\0\0", 3), "the file is truncated: 3 bytes");
}

TEST_CASE("a header length beyond the end of the file is refused", "[checkpoint][malformed]") {
  require_refused(image_with_length(100, "{}"), "the header length 100 runs past the end of the file (10 bytes)");
}

TEST_CASE("a header length above the limit is refused before anything is allocated", "[checkpoint][malformed]") {
  require_refused(image_with_length(kMaxHeaderBytes + 1, "{}"),
                  str_cat("the header length ", kMaxHeaderBytes + 1, " is above the limit of 104857600 bytes"));
  require_refused(image_with_length(~uint64_t(0), "{}"), "the header length 18446744073709551615 is above the limit");
}

TEST_CASE("a header that is not JSON is refused with the byte offset", "[checkpoint][malformed]") {
  require_refused(file_image("{\"t\" {}}"), "invalid JSON at byte 5: expected ':' after an object key");
  require_refused(file_image("\x89PNG\r\n\x1a\n"), "invalid JSON at byte 0: expected a value");
}

TEST_CASE("a header that is JSON but not an object is refused", "[checkpoint][malformed]") {
  require_refused(file_image("[1, 2]  "), "the header is not a JSON object but an array");
  require_refused(file_image("null"), "the header is not a JSON object but null");
}

TEST_CASE("a tensor entry that is not an object is refused", "[checkpoint][malformed]") {
  require_refused(file_image(R"({"t": [0, 4]})"), "tensor 't' must be an object, got an array");
  require_refused(file_image(R"({"t": true})"), "tensor 't' must be an object, got a boolean");
}

TEST_CASE("a tensor entry lacking a field is refused", "[checkpoint][malformed]") {
  require_refused(file_image(R"({"t": {"dtype": "F32", "shape": [1]}})"), "tensor 't' lacks the field 'data_offsets'");
  require_refused(file_image(R"({"t": {"dtype": "F32", "data_offsets": [0, 4]}})", "1234"),
                  "tensor 't' lacks the field 'shape'");
  require_refused(file_image(R"({"t": {"shape": [], "data_offsets": [0, 4]}})", "1234"),
                  "tensor 't' lacks the field 'dtype'");
}

TEST_CASE("a tensor entry with an extra field is refused", "[checkpoint][malformed]") {
  require_refused(file_image(R"({"t": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "stride": [1]}})", "1234"),
                  "tensor 't' has an unexpected field 'stride' (expected dtype, shape and data_offsets)");
}

TEST_CASE("a tensor entry giving a field twice is refused", "[checkpoint][malformed]") {
  require_refused(
      file_image(R"({"t": {"dtype": "F32", "dtype": "F64", "shape": [1], "data_offsets": [0, 4]}})", "1234"),
      "tensor 't' gives the field 'dtype' twice");
}

TEST_CASE("a tensor entry with a wrong-typed field is refused", "[checkpoint][malformed]") {
  require_refused(file_image(R"({"t": {"dtype": 32, "shape": [1], "data_offsets": [0, 4]}})", "1234"),
                  "tensor 't': 'dtype' must be a string, got a number");
  require_refused(file_image(R"({"t": {"dtype": "F32", "shape": "[1]", "data_offsets": [0, 4]}})", "1234"),
                  "tensor 't': 'shape' must be an array, got a string");
  require_refused(file_image(R"({"t": {"dtype": "F32", "shape": [1], "data_offsets": {"begin": 0}}})", "1234"),
                  "tensor 't': 'data_offsets' must be an array, got an object");
  require_refused(one_tensor("F32", "[null]", 0, 4, 4),
                  "tensor 't': dimension 0 of the shape must be a number, got null");
  require_refused(file_image(R"({"t": {"dtype": "F32", "shape": [1], "data_offsets": [0, "4"]}})", "1234"),
                  "tensor 't': data_offsets[1] must be a number, got a string");
}

TEST_CASE("data_offsets that are not two values are refused", "[checkpoint][malformed]") {
  require_refused(file_image(R"({"t": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}})", "1234"),
                  "tensor 't': 'data_offsets' holds more than 2 values");
  require_refused(file_image(R"({"t": {"dtype": "F32", "shape": [1], "data_offsets": [4]}})", "1234"),
                  "tensor 't': 'data_offsets' holds 1 values, not 2");
}

TEST_CASE("an offset that is negative, fractional or above 2^64-1 is refused", "[checkpoint][malformed]") {
  require_refused(file_image(R"({"t": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}})", "1234"),
                  "tensor 't': data_offsets[0] is -4, not a non-negative integer");
  require_refused(file_image(R"({"t": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4.0]}})", "1234"),
                  "tensor 't': data_offsets[1] is 4.0, not a non-negative integer");
  require_refused(file_image(R"({"t": {"dtype": "F32", "shape": [1], "data_offsets": [0, 18446744073709551616]}})"),
                  "tensor 't': data_offsets[1] is 18446744073709551616, above the largest allowed value "
                  "18446744073709551615");
}

TEST_CASE("an unknown dtype is refused", "[checkpoint][malformed]") {
  require_refused(one_tensor("F33", "[1]", 0, 4, 4), "tensor 't' has an unknown dtype 'F33'");
  require_refused(one_tensor("f32", "[1]", 0, 4, 4), "tensor 't' has an unknown dtype 'f32'");
}

TEST_CASE("a dtype of the format that kiln lacks is refused as unsupported", "[checkpoint][malformed]") {
  for (const char* dtype : {"I8", "I16", "U16", "U32", "U64", "F8_E4M3", "F8_E5M2"}) {
    require_refused(one_tensor(dtype, "[1]", 0, 1, 1),
                    str_cat("tensor 't' has dtype ", dtype, ", which kiln does not support"));
  }
}

TEST_CASE("a negative or non-integer dimension is refused", "[checkpoint][malformed]") {
  require_refused(one_tensor("F32", "[2, -3]", 0, 24, 24),
                  "tensor 't': dimension 1 of the shape is -3, not a non-negative integer");
  require_refused(one_tensor("F32", "[-0]", 0, 0, 0),
                  "tensor 't': dimension 0 of the shape is -0, not a non-negative integer");
  require_refused(one_tensor("F32", "[2.5]", 0, 8, 8),
                  "tensor 't': dimension 0 of the shape is 2.5, not a non-negative integer");
  require_refused(one_tensor("F32", "[1e1]", 0, 40, 40),
                  "tensor 't': dimension 0 of the shape is 1e1, not a non-negative integer");
}

TEST_CASE("a dimension above 2^63-1 is refused", "[checkpoint][malformed]") {
  require_refused(one_tensor("U8", "[9223372036854775808]", 0, 0, 0),
                  "tensor 't': dimension 0 of the shape is 9223372036854775808, above the largest allowed value "
                  "9223372036854775807");
}

TEST_CASE("a shape of more than kMaxDims dimensions is refused", "[checkpoint][malformed]") {
  require_refused(one_tensor("F32", "[1,1,1,1,1,1,1,1,1]", 0, 4, 4), "tensor 't' has more than 8 dimensions");
}

TEST_CASE("a shape whose byte size overflows 64 bits is refused", "[checkpoint][malformed]") {
  require_refused(one_tensor("F32", "[4294967296, 4294967296]", 0, 0, 0),
                  "tensor 't': shape [4294967296, 4294967296] of F32 has more bytes than a 64-bit size can count");
  require_refused(one_tensor("U8", "[9223372036854775807, 3, 0]", 0, 0, 0),
                  "has more bytes than a 64-bit size can count");
}

TEST_CASE("data_offsets whose length differs from the shape's byte size are refused", "[checkpoint][malformed]") {
  require_refused(one_tensor("F32", "[2, 3]", 0, 8, 8),
                  "tensor 't': data_offsets [0, 8] hold 8 bytes, but shape [2, 3] of F32 needs 24");
  require_refused(one_tensor("BF16", "[]", 0, 0, 0),
                  "tensor 't': data_offsets [0, 0] hold 0 bytes, but shape [] of BF16 needs 2");
}

TEST_CASE("data_offsets that begin after they end are refused", "[checkpoint][malformed]") {
  require_refused(one_tensor("U8", "[4]", 8, 4, 8), "tensor 't': data_offsets [8, 4] begin after they end");
}

TEST_CASE("overlapping data ranges are refused", "[checkpoint][malformed]") {
  const std::string header =
      str_cat("{", tensor_json("a", "F32", "[4]", 0, 16), ",", tensor_json("b", "F32", "[4]", 8, 24), "}");
  require_refused(file_image(header, std::string(24, '\0')), "tensor 'b': data_offsets [8, 24] overlap tensor 'a'");
}

TEST_CASE("an empty tensor inside another tensor's range is an overlap", "[checkpoint][malformed]") {
  const std::string header =
      str_cat("{", tensor_json("a", "F32", "[4]", 0, 16), ",", tensor_json("e", "F32", "[0]", 8, 8), "}");
  require_refused(file_image(header, std::string(16, '\0')), "tensor 'e': data_offsets [8, 8] overlap tensor 'a'");
}

TEST_CASE("a gap between data ranges is refused", "[checkpoint][malformed]") {
  const std::string header =
      str_cat("{", tensor_json("a", "F32", "[2]", 0, 8), ",", tensor_json("b", "F32", "[2]", 12, 20), "}");
  require_refused(file_image(header, std::string(20, '\0')),
                  "bytes [8, 12) of the data belong to no tensor (a gap before tensor 'b')");
  require_refused(one_tensor("U8", "[4]", 4, 8, 8), "bytes [0, 4) of the data belong to no tensor");
}

TEST_CASE("bytes after the last tensor's data are refused", "[checkpoint][malformed]") {
  require_refused(one_tensor("F32", "[2]", 0, 8, 12), "the file has 4 bytes after the end of the last tensor's data");
  require_refused(file_image("{}", "x"), "the file has 1 bytes after the end of the last tensor's data");
}

TEST_CASE("data running past the end of the file is refused", "[checkpoint][malformed]") {
  require_refused(one_tensor("F32", "[4]", 0, 16, 12),
                  "tensor 't': data_offsets [0, 16] run past the end of the file (the data is 12 bytes)");
}

TEST_CASE("a tensor name given twice is refused", "[checkpoint][malformed]") {
  const std::string header =
      str_cat("{", tensor_json("w", "F32", "[1]", 0, 4), ",", tensor_json("w", "F32", "[1]", 4, 8), "}");
  require_refused(file_image(header, std::string(8, '\0')), "tensor name 'w' appears twice");
}

TEST_CASE("metadata that is not an object of strings is refused", "[checkpoint][malformed]") {
  require_refused(file_image(R"({"__metadata__": ["format", "pt"]})"),
                  "'__metadata__' must be an object, got an array");
  require_refused(file_image(R"({"__metadata__": {"epoch": 3}})"),
                  "'__metadata__' entry 'epoch' must be a string, got a number");
  require_refused(file_image(R"({"__metadata__": {"a": null}})"),
                  "'__metadata__' entry 'a' must be a string, got null");
  require_refused(file_image(R"({"__metadata__": {"format": "pt", "format": "np"}})"),
                  "'__metadata__' key 'format' appears twice");
  require_refused(file_image(R"({"__metadata__": {}, "__metadata__": {}})"), "'__metadata__' appears twice");
}

TEST_CASE("names in messages have control characters escaped and are cut when long", "[checkpoint][malformed]") {
  require_refused(file_image(str_cat("{", tensor_json("a\\u0001b", "F33", "[1]", 0, 4), "}"), "1234"),
                  "tensor 'a\\x01b' has an unknown dtype");
  const std::string long_name(1000, 'n');
  const std::string image = file_image(str_cat("{", tensor_json(long_name, "X", "[1]", 0, 4), "}"), "1234");
  require_refused(image, str_cat("tensor '", std::string(120, 'n'), "...' has an unknown dtype 'X'"));
  // A character that straddles the cut is left out whole.
  const std::string straddling = std::string(119, 'n') + "\xc3\xa9" + "tail";
  require_refused(file_image(str_cat("{", tensor_json(straddling, "X", "[1]", 0, 4), "}"), "1234"),
                  str_cat("tensor '", std::string(119, 'n'), "...' has an unknown dtype 'X'"));
}

TEST_CASE("a file that is missing or not a regular file is refused", "[checkpoint][malformed]") {
  kiln::test::ScratchDir dir;
  const std::string missing = dir.file("missing.safetensors");
  kiln::test::require_error([&] { read_header(missing); }, Status::io,
                            {"cannot load '" + missing + "': No such file or directory"});
  kiln::test::require_error([&] { read_header(dir.path()); }, Status::io,
                            {"cannot load '" + dir.path() + "': not a regular file"});
}

TEST_CASE("parse_header refuses a header larger than the file it is said to come from", "[checkpoint][malformed]") {
  kiln::test::require_error([] { parse_header("{}", 9); }, Status::io,
                            {"the header (2 bytes) runs past the end of the file (9 bytes)"});
  kiln::test::require_error([] { parse_header("{}", 3); }, Status::io, {"runs past the end of the file (3 bytes)"});
}

TEST_CASE("reading a tensor of a file cut short after it was opened fails", "[checkpoint][malformed]") {
  kiln::test::ScratchDir dir;
  const std::string path = dir.file("shrinking.safetensors");
  const float values[4] = {1, 2, 3, 4};
  write_safetensors(path, {{"t", DType::f32, Shape{4}, values}}, {});
  SafetensorsReader reader(path);
  const std::string bytes = kiln::test::read_file(path);
  kiln::test::write_file(path, bytes.substr(0, bytes.size() - 4));
  float out[4];
  kiln::test::require_error(
      [&] { reader.read(reader.header().tensors[0], out); }, Status::io,
      {"cannot load '" + path + "': the file ended inside tensor 't' (it changed while being read)"});
}

TEST_CASE("valid headers: empty, metadata only, entries in any order", "[checkpoint]") {
  kiln::test::ScratchDir dir;
  const std::string path = dir.file("ok.safetensors");
  kiln::test::write_file(path, file_image("{}"));
  CHECK(read_header(path).tensors.empty());
  kiln::test::write_file(path, file_image(R"( {"__metadata__" : {"k" : "v"}} )"));
  CHECK(read_header(path).metadata == Metadata{{"k", "v"}});
  const std::string header =
      str_cat("{", tensor_json("late", "I32", "[1]", 4, 8), ",", tensor_json("empty", "I64", "[0, 2]", 8, 8), ",",
              tensor_json("early", "U8", "[2, 2]", 0, 4), "}");
  kiln::test::write_file(path, file_image(header, "abcdefgh"));
  const Header parsed = read_header(path);
  REQUIRE(parsed.tensors.size() == 3);
  CHECK(parsed.tensors[0].name == "early");
  CHECK(parsed.tensors[1].name == "late");
  CHECK(parsed.tensors[2].name == "empty");
  CHECK(parsed.data_offset == 8 + header.size());
}
