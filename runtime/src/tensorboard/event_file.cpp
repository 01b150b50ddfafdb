#include "kiln/tensorboard/event_file.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <unistd.h>

#include "event_encoding.hpp"
#include "kiln/error.hpp"

namespace kiln::tensorboard {
namespace {

// Writers of one process started in the same second still get distinct files.
std::atomic<int> next_file_number{0};

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || !name[0]) return "localhost";
  return name;
}

std::string event_file_name() {
  const auto seconds = static_cast<long long>(wall_seconds());
  return str_cat("events.out.tfevents.", seconds, ".", host_name(), ".", static_cast<long long>(::getpid()), ".",
                 next_file_number.fetch_add(1));
}

void make_directory(const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  KILN_CHECK(!error, Status::io, "cannot create the TensorBoard folder '", directory, "': ", error.message());
}

}  // namespace

EventFileWriter::EventFileWriter(const std::string& directory) {
  KILN_CHECK(!directory.empty(), Status::invalid_argument, "the TensorBoard folder is empty; give a folder path");
  make_directory(directory);
  path_ = (std::filesystem::path(directory) / event_file_name()).string();
  // "x": never append to or clobber another writer's file.
  file_ = std::fopen(path_.c_str(), "wbx");
  KILN_CHECK(file_, Status::io, "cannot create the TensorBoard event file '", path_, "': ", std::strerror(errno));
  try {
    write_record(encode_file_version_event(wall_seconds(), "brain.Event:2"));
  } catch (...) {
    std::fclose(file_);
    throw;
  }
}

EventFileWriter::~EventFileWriter() { std::fclose(file_); }

void EventFileWriter::write_scalars(int64_t step, std::span<const Scalar> scalars) {
  write_record(encode_scalars_event(wall_seconds(), step, scalars));
}

void EventFileWriter::write_record(const std::string& payload) {
  const std::string record = frame_record(payload);
  const bool written = std::fwrite(record.data(), 1, record.size(), file_) == record.size() && std::fflush(file_) == 0;
  KILN_CHECK(written, Status::io, "cannot write to the TensorBoard event file '", path_, "': ", std::strerror(errno));
}

}  // namespace kiln::tensorboard
