// Files written by write_safetensors read back identically, and files laid
// out as the reference writer lays them out are read.
#include <catch2/catch.hpp>
#include <cstring>

#include "checkpoint_files.hpp"
#include "kiln/checkpoint/safetensors.hpp"
#include "kiln/util/str_cat.hpp"

using namespace kiln;
using namespace kiln::checkpoint;
using kiln::test::ScratchDir;

namespace {

// Distinct, position-dependent bytes, so a swapped or shifted tensor shows.
std::vector<unsigned char> pattern_bytes(size_t size, unsigned seed) {
  std::vector<unsigned char> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<unsigned char>(seed * 31 + i * 7 + 1);
  return bytes;
}

std::vector<unsigned char> read_tensor(const SafetensorsReader& reader, const TensorEntry& entry) {
  std::vector<unsigned char> bytes(size_t(entry.end - entry.begin));
  reader.read(entry, bytes.data());
  return bytes;
}

}  // namespace

TEST_CASE("every dtype, scalars and zero-size tensors survive a round trip", "[checkpoint]") {
  ScratchDir dir;
  const std::string path = dir.file("model.safetensors");
  struct Case {
    std::string name;
    DType dtype;
    Shape shape;
  };
  std::vector<Case> cases;
  for (DType t : kAllDTypes) {
    cases.push_back({str_cat("matrix_", dtype_name(t)), t, Shape{2, 3}});
    cases.push_back({str_cat("scalar_", dtype_name(t)), t, Shape{}});
  }
  cases.push_back({"empty_rows", DType::f32, Shape{0, 4}});
  cases.push_back({"empty_columns", DType::i64, Shape{3, 0}});
  cases.push_back({"", DType::u8, Shape{1}});  // an empty name is a name too

  std::vector<std::vector<unsigned char>> contents;
  std::vector<TensorBytes> tensors;
  for (size_t i = 0; i < cases.size(); ++i) {
    contents.push_back(pattern_bytes(size_t(cases[i].shape.numel()) * dtype_size(cases[i].dtype), unsigned(i)));
    tensors.push_back({cases[i].name, cases[i].dtype, cases[i].shape, contents.back().data()});
  }
  write_safetensors(path, tensors, {});

  SafetensorsReader reader(path);
  REQUIRE(reader.header().tensors.size() == cases.size());
  CHECK(reader.header().metadata.empty());
  CHECK(reader.header().data_offset % 8 == 0);
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("tensor '" << cases[i].name << "'");
    const TensorEntry* entry = reader.find(cases[i].name);
    REQUIRE(entry != nullptr);
    CHECK(entry->dtype == cases[i].dtype);
    CHECK(entry->shape == cases[i].shape);
    CHECK(read_tensor(reader, *entry) == contents[i]);
  }
  for (const char* absent : {"absent", "matrix_f3", "zzz"}) CHECK(reader.find(absent) == nullptr);
  // Written in the order given: the entries come back sorted by offset.
  for (size_t i = 1; i < reader.header().tensors.size(); ++i) {
    CHECK(reader.header().tensors[i - 1].end == reader.header().tensors[i].begin);
  }
  CHECK(reader.header().tensors.front().name == cases.front().name);
}

TEST_CASE("metadata with escapes and non-ASCII text survives a round trip", "[checkpoint]") {
  ScratchDir dir;
  const std::string path = dir.file("meta.safetensors");
  const Metadata metadata = {
      {"format", "pt"},
      {"quotes \" and \\ backslashes", "tab\there, newline\nthere, bell\x07, nul"},
      {std::string("key with a \0 inside", 19), "\x7f delete"},
      {"unicode", "π ≈ 3.14159, 😀 outside the BMP, ü"},
      {"", ""},
  };
  const float weight[2] = {1.5f, -2.0f};
  write_safetensors(path, {{"w \"quoted\" ü", DType::f32, Shape{2}, weight}}, metadata);

  const Header header = read_header(path);
  CHECK(header.metadata == metadata);
  REQUIRE(header.tensors.size() == 1);
  CHECK(header.tensors[0].name == "w \"quoted\" ü");
}

TEST_CASE("the header is padded with spaces so the data starts 8-byte aligned", "[checkpoint]") {
  ScratchDir dir;
  const std::string path = dir.file("padded.safetensors");
  const int32_t values[3] = {1, 2, 3};
  for (size_t name_length = 1; name_length <= 8; ++name_length) {
    write_safetensors(path, {{std::string(name_length, 'x'), DType::i32, Shape{3}, values}}, {});
    const std::string bytes = kiln::test::read_file(path);
    const Header header = read_header(path);
    INFO("name length " << name_length);
    CHECK(header.data_offset % 8 == 0);
    CHECK(bytes.size() == header.data_offset + sizeof values);
    const std::string json = bytes.substr(8, header.data_offset - 8);
    const size_t close = json.rfind('}');
    CHECK(json.find_first_not_of(' ', close + 1) == std::string::npos);
    CHECK(json.size() - close - 1 < 8);
    CHECK(std::memcmp(bytes.data() + header.data_offset, values, sizeof values) == 0);
  }
}

TEST_CASE("a file as the reference writer lays it out is read", "[checkpoint]") {
  // The exact bytes the reference package writes for {"a": f32 [1, 2],
  // "b": i64 [[3]], "c": u8 []} with metadata {"format": "np"}: metadata
  // first, tensors ordered by alignment then name, spaces up to 8 bytes.
  const std::string header =
      R"({"__metadata__":{"format":"np"},"b":{"dtype":"I64","shape":[1,1],"data_offsets":[0,8]},)"
      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},"c":{"dtype":"U8","shape":[0],"data_offsets":[16,16]}})"
      "     ";
  const std::string data("\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x3f\x00\x00\x00\x40", 16);
  const std::string image = kiln::test::file_image(header, data);
  REQUIRE(image.size() == 224);
  REQUIRE(image.substr(0, 8) == std::string("\xc8\0\0\0\0\0\0\0", 8));

  ScratchDir dir;
  const std::string path = dir.file("reference.safetensors");
  kiln::test::write_file(path, image);
  SafetensorsReader reader(path);
  CHECK(reader.header().metadata == Metadata{{"format", "np"}});
  CHECK(reader.header().data_offset == 208);
  REQUIRE(reader.header().tensors.size() == 3);
  const TensorEntry* a = reader.find("a");
  const TensorEntry* b = reader.find("b");
  const TensorEntry* c = reader.find("c");
  REQUIRE((a && b && c));
  CHECK(a->dtype == DType::f32);
  CHECK(a->shape == Shape{2});
  float a_values[2];
  reader.read(*a, a_values);
  CHECK(a_values[0] == 1.0f);
  CHECK(a_values[1] == 2.0f);
  CHECK(b->dtype == DType::i64);
  CHECK(b->shape == Shape{1, 1});
  int64_t b_value = 0;
  reader.read(*b, &b_value);
  CHECK(b_value == 3);
  CHECK(c->dtype == DType::u8);
  CHECK(c->shape == Shape{0});
  CHECK(c->begin == c->end);
}

TEST_CASE("the format's dtype names", "[checkpoint]") {
  CHECK(std::string(safetensors_dtype_name(DType::f32)) == "F32");
  CHECK(std::string(safetensors_dtype_name(DType::f64)) == "F64");
  CHECK(std::string(safetensors_dtype_name(DType::f16)) == "F16");
  CHECK(std::string(safetensors_dtype_name(DType::bf16)) == "BF16");
  CHECK(std::string(safetensors_dtype_name(DType::i32)) == "I32");
  CHECK(std::string(safetensors_dtype_name(DType::i64)) == "I64");
  CHECK(std::string(safetensors_dtype_name(DType::u8)) == "U8");
  CHECK(std::string(safetensors_dtype_name(DType::boolean)) == "BOOL");
}
