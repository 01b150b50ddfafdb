#include "checkpoint/state_metadata.hpp"

#include <charconv>
#include <cmath>

#include "kiln/error.hpp"
#include "kiln/util/str_cat.hpp"

namespace kiln::abi {
namespace state_keys {

std::string group_key(size_t group, std::string_view what) { return str_cat("optimizer.group.", group, ".", what); }

}  // namespace state_keys

namespace {

template <class T>
std::string to_text(T v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Parses all of `text` as a T; false when it is not one.
template <class T>
bool parse(const std::string& text, T& out) {
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data(), end, out);
  return r.ec == std::errc() && r.ptr == end && !text.empty();
}

}  // namespace

std::string format_number(int64_t v) { return to_text(v); }
std::string format_number(uint64_t v) { return to_text(v); }
std::string format_number(double v) { return to_text(v); }

StateMetadata::StateMetadata(const checkpoint::Metadata& metadata, std::string path)
    : metadata_(metadata), path_(std::move(path)) {}

const std::string* StateMetadata::find(std::string_view key) const {
  for (const auto& [k, v] : metadata_)
    if (k == key) return &v;
  return nullptr;
}

const std::string& StateMetadata::text(std::string_view key) const {
  const std::string* v = find(key);
  KILN_CHECK(v, Status::io, "'", path_, "': the training state has no '", key, "' in its metadata");
  return *v;
}

int64_t StateMetadata::count(std::string_view key) const {
  const std::string& t = text(key);
  int64_t v = 0;
  KILN_CHECK(parse(t, v) && v >= 0, Status::io, "'", path_, "': metadata '", key, "' is \"", t,
             "\"; expected an integer >= 0");
  return v;
}

uint64_t StateMetadata::u64(std::string_view key) const {
  const std::string& t = text(key);
  uint64_t v = 0;
  KILN_CHECK(parse(t, v), Status::io, "'", path_, "': metadata '", key, "' is \"", t,
             "\"; expected an unsigned 64-bit integer");
  return v;
}

double StateMetadata::number(std::string_view key) const {
  const std::string& t = text(key);
  double v = 0;
  KILN_CHECK(parse(t, v) && std::isfinite(v), Status::io, "'", path_, "': metadata '", key, "' is \"", t,
             "\"; expected a finite number");
  return v;
}

double StateMetadata::positive(std::string_view key) const {
  const double v = number(key);
  KILN_CHECK(v > 0.0, Status::io, "'", path_, "': metadata '", key, "' is ", v, "; expected a number > 0");
  return v;
}

}  // namespace kiln::abi
