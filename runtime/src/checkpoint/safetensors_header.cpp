// parse_header: every fault of a header gets its own message. The text is
// first checked to be JSON as a whole, so that a syntax error is reported as
// one wherever it is, then walked a second time for its meaning.
#include <algorithm>
#include <limits>
#include <tuple>

#include "json_reader.hpp"
#include "kiln/checkpoint/safetensors.hpp"
#include "kiln/error.hpp"
#include "repeated_name.hpp"
#include "safetensors_dtype.hpp"

namespace kiln::checkpoint {
namespace {

constexpr std::string_view kMetadataKey = "__metadata__";

template <class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  throw_error(Status::io, str_cat(parts...));
}

// A name as it goes into a message: control characters escaped and long
// names cut (at a character boundary, so the message stays UTF-8), since a
// hostile file chooses them.
std::string printable(std::string_view name) {
  constexpr size_t kMaxShown = 120;
  size_t shown = std::min(name.size(), kMaxShown);
  while (shown < name.size() && (static_cast<unsigned char>(name[shown]) & 0xc0) == 0x80) --shown;
  std::string out;
  for (const char ch : name.substr(0, shown)) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  if (shown < name.size()) out += "...";
  return out;
}

std::string tensor_label(std::string_view name) { return str_cat("tensor '", printable(name), "'"); }

enum class IntegerFault { none, not_a_natural_number, too_large };

// The value of a JSON number literal that must be an integer in [0, max].
IntegerFault parse_unsigned(std::string_view literal, uint64_t max, uint64_t* out) {
  if (literal.find_first_of("-.eE") != std::string_view::npos) return IntegerFault::not_a_natural_number;
  uint64_t value = 0;
  for (char c : literal) {
    const uint64_t digit = uint64_t(c - '0');
    if (value > (max - digit) / 10) return IntegerFault::too_large;
    value = value * 10 + digit;
  }
  *out = value;
  return IntegerFault::none;
}

void expect_kind(JsonReader& r, JsonKind want, std::string_view what) {
  const JsonKind got = r.peek();
  if (got != want) fail(what, " must be ", json_kind_name(want), ", got ", json_kind_name(got));
}

// Reads a non-negative integer at most `max`; `what` names it in messages.
uint64_t read_unsigned(JsonReader& r, uint64_t max, std::string_view what) {
  expect_kind(r, JsonKind::number, what);
  const std::string_view literal = r.read_number();
  uint64_t value = 0;
  switch (parse_unsigned(literal, max, &value)) {
    case IntegerFault::none: return value;
    case IntegerFault::not_a_natural_number: fail(what, " is ", printable(literal), ", not a non-negative integer");
    case IntegerFault::too_large: fail(what, " is ", printable(literal), ", above the largest allowed value ", max);
  }
  return value;
}

DType read_dtype(JsonReader& r, std::string_view name) {
  expect_kind(r, JsonKind::string, str_cat(tensor_label(name), ": 'dtype'"));
  const std::string text = r.read_string();
  DType dtype = DType::f32;
  switch (lookup_safetensors_dtype(text, &dtype)) {
    case DTypeLookup::found: break;
    case DTypeLookup::unsupported: fail(tensor_label(name), " has dtype ", text, ", which kiln does not support");
    case DTypeLookup::unknown: fail(tensor_label(name), " has an unknown dtype '", printable(text), "'");
  }
  return dtype;
}

Shape read_shape(JsonReader& r, std::string_view name) {
  const std::string label = tensor_label(name);
  expect_kind(r, JsonKind::array, str_cat(label, ": 'shape'"));
  r.begin_array();
  Shape shape;
  while (r.next_item()) {
    if (shape.rank() == kMaxDims) fail(label, " has more than ", kMaxDims, " dimensions");
    const std::string what = str_cat(label, ": dimension ", shape.rank(), " of the shape");
    shape.push_back(int64_t(read_unsigned(r, uint64_t(std::numeric_limits<int64_t>::max()), what)));
  }
  return shape;
}

void read_offsets(JsonReader& r, std::string_view name, uint64_t* begin, uint64_t* end) {
  const std::string label = tensor_label(name);
  expect_kind(r, JsonKind::array, str_cat(label, ": 'data_offsets'"));
  r.begin_array();
  uint64_t values[2] = {};
  int count = 0;
  while (r.next_item()) {
    if (count == 2) fail(label, ": 'data_offsets' holds more than 2 values");
    values[count] =
        read_unsigned(r, std::numeric_limits<uint64_t>::max(), str_cat(label, ": data_offsets[", count, "]"));
    ++count;
  }
  if (count != 2) fail(label, ": 'data_offsets' holds ", count, " values, not 2");
  *begin = values[0];
  *end = values[1];
}

// The bytes of a tensor, or false when the count does not fit 64 bits.
bool byte_size(const Shape& shape, DType dtype, uint64_t* out) {
  uint64_t bytes = dtype_size(dtype);
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(bytes, uint64_t(d), &bytes)) return false;
  }
  *out = bytes;
  return true;
}

TensorEntry read_entry(JsonReader& r, std::string name) {
  const std::string label = tensor_label(name);
  expect_kind(r, JsonKind::object, label);
  TensorEntry entry;
  bool has_dtype = false, has_shape = false, has_offsets = false;
  const auto first_time = [&](bool* seen, std::string_view field) {
    if (*seen) fail(label, " gives the field '", field, "' twice");
    *seen = true;
  };
  r.begin_object();
  std::string field;
  while (r.next_member(&field)) {
    if (field == "dtype") {
      first_time(&has_dtype, field);
      entry.dtype = read_dtype(r, name);
    } else if (field == "shape") {
      first_time(&has_shape, field);
      entry.shape = read_shape(r, name);
    } else if (field == "data_offsets") {
      first_time(&has_offsets, field);
      read_offsets(r, name, &entry.begin, &entry.end);
    } else {
      fail(label, " has an unexpected field '", printable(field), "' (expected dtype, shape and data_offsets)");
    }
  }
  if (!has_dtype) fail(label, " lacks the field 'dtype'");
  if (!has_shape) fail(label, " lacks the field 'shape'");
  if (!has_offsets) fail(label, " lacks the field 'data_offsets'");

  uint64_t bytes = 0;
  if (!byte_size(entry.shape, entry.dtype, &bytes)) {
    fail(label, ": shape ", to_string(entry.shape), " of ", safetensors_dtype_name(entry.dtype),
         " has more bytes than a 64-bit size can count");
  }
  if (entry.begin > entry.end) {
    fail(label, ": data_offsets [", entry.begin, ", ", entry.end, "] begin after they end");
  }
  if (entry.end - entry.begin != bytes) {
    fail(label, ": data_offsets [", entry.begin, ", ", entry.end, "] hold ", entry.end - entry.begin,
         " bytes, but shape ", to_string(entry.shape), " of ", safetensors_dtype_name(entry.dtype), " needs ", bytes);
  }
  entry.name = std::move(name);
  return entry;
}

Metadata read_metadata(JsonReader& r) {
  expect_kind(r, JsonKind::object, "'__metadata__'");
  Metadata metadata;
  r.begin_object();
  std::string key;
  while (r.next_member(&key)) {
    expect_kind(r, JsonKind::string, str_cat("'__metadata__' entry '", printable(key), "'"));
    metadata.emplace_back(std::move(key), r.read_string());
  }
  return metadata;
}

// Sorts the tensors by their place in the data and checks that they tile it
// exactly: from byte 0, without gaps or overlaps, to the end of the file.
void check_ranges(std::vector<TensorEntry>& tensors, uint64_t data_size) {
  std::sort(tensors.begin(), tensors.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  uint64_t covered = 0;
  const TensorEntry* previous = nullptr;
  for (const TensorEntry& t : tensors) {
    const std::string range = str_cat("data_offsets [", t.begin, ", ", t.end, "]");
    if (t.end > data_size) {
      fail(tensor_label(t.name), ": ", range, " run past the end of the file (the data is ", data_size, " bytes)");
    }
    if (t.begin < covered) fail(tensor_label(t.name), ": ", range, " overlap ", tensor_label(previous->name));
    if (t.begin > covered) {
      fail("bytes [", covered, ", ", t.begin, ") of the data belong to no tensor (a gap before ", tensor_label(t.name),
           ")");
    }
    covered = t.end;
    previous = &t;
  }
  if (covered < data_size) {
    fail("the file has ", data_size - covered, " bytes after the end of the last tensor's data");
  }
}

}  // namespace

Header parse_header(std::string_view json, uint64_t file_size) {
  KILN_CHECK(file_size >= 8 && json.size() <= file_size - 8, Status::io, "the header (", json.size(),
             " bytes) runs past the end of the file (", file_size, " bytes)");
  {
    JsonReader syntax(json);
    syntax.skip_value();
    syntax.finish();
  }
  Header header;
  header.data_offset = 8 + json.size();
  JsonReader r(json);
  if (r.peek() != JsonKind::object) fail("the header is not a JSON object but ", json_kind_name(r.peek()));
  r.begin_object();
  bool has_metadata = false;
  std::string key;
  while (r.next_member(&key)) {
    if (key == kMetadataKey) {
      if (has_metadata) fail("'__metadata__' appears twice");
      has_metadata = true;
      header.metadata = read_metadata(r);
    } else {
      header.tensors.push_back(read_entry(r, std::move(key)));
    }
  }
  if (const auto twice =
          find_repeated_name(header.tensors, [](const TensorEntry& t) { return std::string_view(t.name); })) {
    fail("tensor name '", printable(*twice), "' appears twice");
  }
  if (const auto twice =
          find_repeated_name(header.metadata, [](const auto& kv) { return std::string_view(kv.first); })) {
    fail("'__metadata__' key '", printable(*twice), "' appears twice");
  }
  check_ranges(header.tensors, file_size - header.data_offset);
  return header;
}

}  // namespace kiln::checkpoint
