#include "fd_io.hpp"

#include <cerrno>
#include <unistd.h>

namespace kiln::checkpoint {

UniqueFd::~UniqueFd() { close(); }

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.release();
  }
  return *this;
}

int UniqueFd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

int UniqueFd::close() {
  if (fd_ < 0) return 0;
  // Linux releases the descriptor even when close fails, EINTR included,
  // so it is never retried.
  return ::close(release());
}

int64_t pread_full(int fd, void* dst, size_t size, uint64_t offset) {
  auto* out = static_cast<unsigned char*>(dst);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, out + done, size - done, off_t(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    done += size_t(n);
  }
  return int64_t(done);
}

bool write_full(int fd, const void* src, size_t size) {
  const auto* in = static_cast<const unsigned char*>(src);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, in + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    done += size_t(n);
  }
  return true;
}

}  // namespace kiln::checkpoint
