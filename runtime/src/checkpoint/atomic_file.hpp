// A file written so that its path holds either what was there before or the
// complete new content, never a mix, whatever happens to the process:
//
//   AtomicFileWriter file(path);   // creates .<name>.tmp.<pid>.<n> beside it
//   file.write(bytes, size);       // as often as needed
//   file.commit();                 // fsync, close, rename over path, fsync the directory
//
// Any failure throws kiln::Error(Status::io) "cannot save '<path>': <step>:
// <reason>" and removes the temporary file; so does destruction without
// commit (an exception elsewhere). A process killed mid-save cannot clean
// up: its temporary file stays, hidden (a leading dot) and never named like
// the target. Later saves leave such files alone, as the reference writers
// do: telling a stale one from another process's save in progress needs
// more than a name.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "fd_io.hpp"

namespace kiln::checkpoint {

class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(const void* data, size_t size);
  void commit();

 private:
  [[noreturn]] void fail(std::string_view step, int error_number);
  void remove_temporary();

  std::string path_;
  std::string directory_;
  std::string temporary_path_;
  UniqueFd fd_;
  bool temporary_exists_ = false;
};

}  // namespace kiln::checkpoint
