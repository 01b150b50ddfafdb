// POSIX file descriptor helpers for the checkpoint reader and writer:
// ownership, and whole-buffer reads and writes that retry after EINTR and
// short transfers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::checkpoint {

// Owns a file descriptor and closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  // Closes now and reports close's own result (0, or -1 with errno set),
  // which can be the first sign of a failed write on some file systems.
  int close();

 private:
  int fd_ = -1;
};

// Reads `size` bytes at `offset`; returns the count read, less than `size`
// only at the end of the file, or -1 with errno set.
int64_t pread_full(int fd, void* dst, size_t size, uint64_t offset);

// Writes all `size` bytes; returns false with errno set on failure.
bool write_full(int fd, const void* src, size_t size);

}  // namespace kiln::checkpoint
