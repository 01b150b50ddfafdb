#include "checkpoint_files.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "kiln/checkpoint/safetensors.hpp"
#include "kiln/util/str_cat.hpp"
#include "support/gradcheck.hpp"

namespace kiln::test {

ScratchDir::ScratchDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "kiln-checkpoint-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  namespace fs = std::filesystem;
  std::error_code ignored;
  // Tests make directories read-only; removing their content needs them writable.
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ignored);
  for (const auto& entry : fs::recursive_directory_iterator(path_, ignored)) {
    if (entry.is_directory(ignored))
      fs::permissions(entry.path(), fs::perms::owner_all, fs::perm_options::add, ignored);
  }
  fs::remove_all(path_, ignored);
}

std::vector<std::string> ScratchDir::names_in(const std::string& directory) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(directory))
    out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string file_image(std::string_view header, std::string_view data) {
  std::string image(8, '\0');
  for (int i = 0; i < 8; ++i) image[size_t(i)] = char((uint64_t(header.size()) >> (8 * i)) & 0xff);
  image.append(header);
  image.append(data);
  return image;
}

std::string tensor_json(std::string_view name, std::string_view dtype, std::string_view shape, uint64_t begin,
                        uint64_t end) {
  return str_cat("\"", name, "\":{\"dtype\":\"", dtype, "\",\"shape\":", shape, ",\"data_offsets\":[", begin, ",", end,
                 "]}");
}

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void require_refused(std::string_view image, const std::string& reason) {
  ScratchDir dir;
  const std::string path = dir.file("bad.safetensors");
  write_file(path, image);
  const std::vector<std::string> parts = {"cannot load '" + path + "': ", reason};
  require_error([&] { checkpoint::read_header(path); }, Status::io, parts);
  require_error([&] { checkpoint::SafetensorsReader reader(path); }, Status::io, parts);
}

}  // namespace kiln::test
