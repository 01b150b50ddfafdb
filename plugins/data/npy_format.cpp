// Parsing .npy files.
#include "npy_format.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <string_view>

namespace kiln_data {
namespace {

// Tensors hold their elements in host order, which the byte swap below takes as little-endian.
static_assert(std::endian::native == std::endian::little, "kiln reads NPY files on little-endian hosts only");

constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

// A descr is a byte order ('<' little-endian, '>' big-endian, '|' for
// single bytes, where order does not apply) followed by one of these.
struct NpyType {
  const char* code;
  kiln_dtype dtype;
};
constexpr NpyType kNpyTypes[] = {{"f4", KILN_F32}, {"f8", KILN_F64}, {"i4", KILN_I32},
                                 {"i8", KILN_I64}, {"u1", KILN_U8},  {"b1", KILN_BOOL}};

struct NpyElement {
  kiln_dtype dtype;
  bool big_endian;  // of more than one byte, stored most significant byte first
};

// Reads the values of the header dict, a Python literal written by numpy.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  // The text right after "'key':", with spaces skipped.
  std::string_view value_of(const char* key) const {
    for (const char quote : {'\'', '"'}) {
      const std::string quoted = cat(quote, key, quote);
      size_t at = text_.find(quoted);
      if (at == std::string_view::npos) continue;
      at = text_.find_first_not_of(' ', at + quoted.size());
      if (at == std::string_view::npos || text_[at] != ':') break;
      at = text_.find_first_not_of(' ', at + 1);
      if (at != std::string_view::npos) return text_.substr(at);
    }
    corrupt(cat("it has no '", key, "' entry"));
  }

  std::string string_of(const char* key) const {
    const std::string_view v = value_of(key);
    const bool quoted = !v.empty() && (v[0] == '\'' || v[0] == '"');
    const size_t end = quoted ? v.find(v[0], 1) : std::string_view::npos;
    if (end == std::string_view::npos) corrupt(cat("its '", key, "' is not a string"));
    return std::string(v.substr(1, end - 1));
  }

  bool bool_of(const char* key) const {
    const std::string_view v = value_of(key);
    if (v.starts_with("True")) return true;
    if (v.starts_with("False")) return false;
    corrupt(cat("its '", key, "' is neither True nor False"));
  }

  std::vector<int64_t> shape_of(const char* key) const {
    std::string_view v = value_of(key);
    if (v.empty() || v[0] != '(') corrupt(cat("its '", key, "' is not a tuple"));
    std::vector<int64_t> shape;
    size_t at = 1;
    for (;;) {
      while (at < v.size() && (v[at] == ' ' || v[at] == ',')) ++at;
      if (at < v.size() && v[at] == ')') return shape;
      if (at >= v.size() || !std::isdigit(static_cast<unsigned char>(v[at])))
        corrupt(cat("its '", key, "' is not a tuple of non-negative integers"));
      int64_t d = 0;
      for (; at < v.size() && std::isdigit(static_cast<unsigned char>(v[at])); ++at) {
        if (d > (INT64_MAX - 9) / 10) corrupt(cat("a dimension of its '", key, "' is too large"));
        d = d * 10 + (v[at] - '0');
      }
      shape.push_back(d);
    }
  }

  [[noreturn]] void corrupt(const std::string& why) const {
    fail(KILN_ERR_IO, "NPY file '", path_, "' has a corrupt header: ", why, " (header: ", text_, ")");
  }

 private:
  std::string_view text_;
  const std::string& path_;
};

NpyElement element_of(const std::string& descr, const std::string& path) {
  const char order = descr.empty() ? '\0' : descr[0];
  for (const NpyType& t : kNpyTypes) {
    if (descr.size() < 2 || descr.compare(1, std::string::npos, t.code) != 0) continue;
    const bool one_byte = dtype_size(t.dtype) == 1;
    if (order == '<' || order == '>' || (order == '|' && one_byte)) return {t.dtype, order == '>' && !one_byte};
  }
  fail(KILN_ERR_UNSUPPORTED, "NPY file '", path, "' has dtype '", descr,
       "'; expected one of <f4 <f8 <i4 <i8 |u1 |b1 or their big-endian forms >f4 >f8 >i4 >i8");
}

// Reverses the bytes of each element of `data` in place: big-endian to host order.
void swap_element_bytes(Bytes& data, size_t element_size) {
  for (auto element = data.begin(); element != data.end(); element += std::ptrdiff_t(element_size))
    std::reverse(element, element + std::ptrdiff_t(element_size));
}

}  // namespace

NpyArray parse_npy(const Bytes& file, const std::string& path) {
  if (file.size() < sizeof kMagic || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0)
    fail(KILN_ERR_IO, "'", path, "' is not an NPY file: it does not start with the magic \"\\x93NUMPY\"");
  if (file.size() < 10) fail(KILN_ERR_IO, "NPY file '", path, "' is truncated: ", file.size(), " bytes, no header");
  const unsigned major = file[6];
  if (major < 1 || major > 3)
    fail(KILN_ERR_UNSUPPORTED, "NPY file '", path, "' has format version ", major, ".", unsigned(file[7]),
         "; expected 1.x, 2.x or 3.x");
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t header_start = 8 + length_bytes;
  if (file.size() < header_start)
    fail(KILN_ERR_IO, "NPY file '", path, "' is truncated: ", file.size(), " bytes, no header length");
  const size_t header_length =
      length_bytes == 2 ? read_le<uint16_t>(file, 8) : size_t(read_le<uint32_t>(file, 8));
  if (file.size() - header_start < header_length)
    fail(KILN_ERR_IO, "NPY file '", path, "' is truncated: its header needs ", header_length, " bytes, the file holds ",
         file.size() - header_start, " after the header length");
  const HeaderParser header({reinterpret_cast<const char*>(file.data()) + header_start, header_length}, path);
  const NpyElement element = element_of(header.string_of("descr"), path);
  NpyArray array{element.dtype, header.shape_of("shape"), {}};
  if (header.bool_of("fortran_order"))
    fail(KILN_ERR_UNSUPPORTED, "NPY file '", path, "' is in Fortran order; only C order (fortran_order False) is "
         "read: save numpy.ascontiguousarray(a) instead");
  const size_t data_start = header_start + header_length;
  const size_t held = file.size() - data_start;
  // Multiply with a bound so that a huge shape cannot overflow.
  size_t expected = dtype_size(array.dtype);
  for (int64_t d : array.shape)
    expected = (d != 0 && expected > held / size_t(d)) ? held + 1 : expected * size_t(d);
  if (held < expected)
    fail(KILN_ERR_IO, "NPY file '", path, "' is truncated: its header promises ", dtype_name(array.dtype),
         shape_text(array.shape), ", the file holds ", held, " bytes of data");
  if (held > expected)
    fail(KILN_ERR_IO, "NPY file '", path, "' holds ", held, " bytes of data, ", held - expected,
         " more than its header promises (", dtype_name(array.dtype), shape_text(array.shape), " = ", expected,
         " bytes)");
  array.data.assign(file.begin() + std::ptrdiff_t(data_start), file.end());
  if (element.big_endian) swap_element_bytes(array.data, dtype_size(array.dtype));
  return array;
}

}  // namespace kiln_data
