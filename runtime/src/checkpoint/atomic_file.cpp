#include "atomic_file.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "kiln/error.hpp"

namespace kiln::checkpoint {
namespace {

// Tells apart the temporary files of saves running at once in one process.
std::atomic<uint64_t> temporary_counter{0};

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)) {
  const size_t slash = path_.rfind('/');
  const std::string_view name =
      slash == std::string::npos ? std::string_view(path_) : std::string_view(path_).substr(slash + 1);
  KILN_CHECK(!name.empty() && name != "." && name != "..", Status::invalid_argument, "cannot save '", path_,
             "': the path does not end in a file name");
  directory_ = slash == std::string::npos ? "." : slash == 0 ? "/" : path_.substr(0, slash);
  const std::string prefix = str_cat(slash == std::string::npos ? "" : path_.substr(0, slash + 1), ".", name, ".tmp.",
                                     int64_t(::getpid()), ".");
  // A killed process with the same pid (a restarted container often gets
  // the same one) may have left a file of the same name: take the next.
  int fd;
  do {
    temporary_path_ = str_cat(prefix, temporary_counter.fetch_add(1));
    fd = ::open(temporary_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  } while (fd < 0 && (errno == EINTR || errno == EEXIST));
  if (fd < 0) fail("create temporary file", errno);
  fd_ = UniqueFd(fd);
  temporary_exists_ = true;
}

AtomicFileWriter::~AtomicFileWriter() {
  fd_.close();
  remove_temporary();
}

void AtomicFileWriter::remove_temporary() {
  if (temporary_exists_) ::unlink(temporary_path_.c_str());
  temporary_exists_ = false;
}

void AtomicFileWriter::fail(std::string_view step, int error_number) {
  fd_.close();
  remove_temporary();
  throw_error(Status::io, str_cat("cannot save '", path_, "': ", step, ": ", std::strerror(error_number)));
}

void AtomicFileWriter::write(const void* data, size_t size) {
  if (!write_full(fd_.get(), data, size)) fail("write", errno);
}

void AtomicFileWriter::commit() {
  if (::fsync(fd_.get()) != 0) fail("flush to disk", errno);
  if (fd_.close() != 0) fail("close", errno);
  if (::rename(temporary_path_.c_str(), path_.c_str()) != 0) fail("rename", errno);
  temporary_exists_ = false;
  // The rename itself reaches the disk only with the directory.
  UniqueFd directory(::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!directory.valid()) fail("open the directory", errno);
  // EINVAL: the file system cannot sync a directory; there is nothing more to do.
  if (::fsync(directory.get()) != 0 && errno != EINVAL) fail("flush the directory to disk", errno);
}

}  // namespace kiln::checkpoint
