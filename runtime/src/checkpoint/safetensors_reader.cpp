// read_header and SafetensorsReader: open, check the length prefix against
// the file size, read exactly the header, validate it (parse_header).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <numeric>
#include <sys/stat.h>

#include "fd_io.hpp"
#include "header_length.hpp"
#include "kiln/checkpoint/safetensors.hpp"
#include "kiln/error.hpp"

namespace kiln::checkpoint {
namespace {

[[noreturn]] void fail_load(const std::string& path, std::string_view reason) {
  throw_error(Status::io, str_cat("cannot load '", path, "': ", reason));
}

struct OpenFile {
  UniqueFd fd;
  uint64_t size = 0;
};

OpenFile open_for_reading(const std::string& path) {
  OpenFile file;
  do {
    file.fd = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  } while (!file.fd.valid() && errno == EINTR);
  if (!file.fd.valid()) fail_load(path, std::strerror(errno));
  struct stat st;
  if (::fstat(file.fd.get(), &st) != 0) fail_load(path, str_cat("fstat: ", std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) fail_load(path, "not a regular file");
  file.size = uint64_t(st.st_size);
  return file;
}

// Reads exactly `size` bytes at `offset`; `what` names them in messages.
void read_exactly(const std::string& path, int fd, void* dst, size_t size, uint64_t offset, std::string_view what) {
  const int64_t n = pread_full(fd, dst, size, offset);
  if (n < 0) fail_load(path, str_cat("reading ", what, ": ", std::strerror(errno)));
  if (uint64_t(n) != size) fail_load(path, str_cat("the file ended inside ", what, " (it changed while being read)"));
}

// Runs `check`, adding the path to the message of what it throws.
template <class Check>
auto naming_path(const std::string& path, Check&& check) {
  try {
    return check();
  } catch (const Error& e) {
    fail_load(path, e.what());
  }
}

Header read_validated_header(const std::string& path, const OpenFile& file) {
  unsigned char prefix[8];
  const size_t prefix_size = file.size < 8 ? size_t(file.size) : 8;
  read_exactly(path, file.fd.get(), prefix, prefix_size, 0, "the header length");
  const uint64_t length = naming_path(path, [&] { return checked_header_length({prefix, prefix_size}, file.size); });
  std::string json(size_t(length), '\0');
  read_exactly(path, file.fd.get(), json.data(), json.size(), 8, "the header");
  return naming_path(path, [&] { return parse_header(json, file.size); });
}

}  // namespace

Header read_header(const std::string& path) {
  const OpenFile file = open_for_reading(path);
  return read_validated_header(path, file);
}

SafetensorsReader::SafetensorsReader(const std::string& path) : path_(path) {
  OpenFile file = open_for_reading(path);
  header_ = read_validated_header(path, file);
  by_name_.resize(header_.tensors.size());
  std::iota(by_name_.begin(), by_name_.end(), size_t(0));
  std::sort(by_name_.begin(), by_name_.end(),
            [&](size_t a, size_t b) { return header_.tensors[a].name < header_.tensors[b].name; });
  fd_ = file.fd.release();  // last: nothing after it can throw and leak the descriptor
}

SafetensorsReader::~SafetensorsReader() { UniqueFd closing(fd_); }

const TensorEntry* SafetensorsReader::find(std::string_view name) const {
  const auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                                   [&](size_t i, std::string_view n) { return header_.tensors[i].name < n; });
  return it != by_name_.end() && header_.tensors[*it].name == name ? &header_.tensors[*it] : nullptr;
}

void SafetensorsReader::read(const TensorEntry& entry, void* dst) const {
  read_exactly(path_, fd_, dst, size_t(entry.end - entry.begin), header_.data_offset + entry.begin,
               str_cat("tensor '", entry.name, "'"));
}

}  // namespace kiln::checkpoint
