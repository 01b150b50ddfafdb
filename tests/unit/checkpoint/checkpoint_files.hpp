// Files for the checkpoint tests: a scratch directory per test, raw file
// images built byte by byte, the listing of a directory, and the check that
// a malformed file is refused.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::test {

// A new empty directory under the system's temporary directory, removed
// with everything in it when the object goes out of scope.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }
  // The names in the directory, sorted, without "." and "..".
  std::vector<std::string> names() const { return names_in(path_); }
  static std::vector<std::string> names_in(const std::string& directory);

 private:
  std::string path_;
};

// A safetensors file image: the 8-byte little-endian length of `header`,
// `header`, then `data`.
std::string file_image(std::string_view header, std::string_view data = {});

// One tensor entry of a header, e.g. "w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}.
std::string tensor_json(std::string_view name, std::string_view dtype, std::string_view shape, uint64_t begin,
                        uint64_t end);

void write_file(const std::string& path, std::string_view bytes);
std::string read_file(const std::string& path);

// Writes `image` to a file and checks that read_header and SafetensorsReader
// both refuse it with Status::io and a message that names the file and
// contains `reason`.
void require_refused(std::string_view image, const std::string& reason);

}  // namespace kiln::test
