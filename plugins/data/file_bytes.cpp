// Reading files, plain or gzip-compressed.
#include "file_bytes.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "support.hpp"

namespace kiln_data {
namespace {

// Whether a gzip member starts at `at` of `bytes`.
bool is_gzip_at(const Bytes& bytes, size_t at) {
  return bytes.size() >= at + 2 && bytes[at] == 0x1f && bytes[at + 1] == 0x8b;
}

bool is_gzip(const Bytes& bytes) { return is_gzip_at(bytes, 0); }

// Decompresses every member of `compressed`: files joined with `cat a.gz
// b.gz` are one file, as gzip -d reads them. Anything else after a
// member's end is an error, never silently dropped.
Bytes gunzip(const Bytes& compressed, const std::string& path, const char* role) {
  z_stream stream{};
  // 16 + MAX_WBITS: a gzip wrapper, not a raw zlib stream.
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) fail(KILN_ERR_OUT_OF_MEMORY, "cannot start zlib for ", path);
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&stream, inflateEnd);
  stream.next_in = const_cast<Bytef*>(compressed.data());
  stream.avail_in = uInt(compressed.size());
  Bytes out(compressed.size() * 4 + 1024);
  size_t produced = 0;  // zlib's own count restarts with each member
  for (;;) {
    if (produced == out.size()) out.resize(out.size() * 2);
    stream.next_out = out.data() + produced;
    stream.avail_out = uInt(std::min<size_t>(out.size() - produced, UINT_MAX));
    const int rc = inflate(&stream, Z_NO_FLUSH);
    produced = size_t(stream.next_out - out.data());
    if (rc == Z_STREAM_END && stream.avail_in == 0) break;
    if (rc == Z_STREAM_END) {
      const size_t member_end = compressed.size() - stream.avail_in;
      if (!is_gzip_at(compressed, member_end))
        fail(KILN_ERR_IO, role, " '", path, "' has ", stream.avail_in, " bytes after the end of its gzip stream",
             " (at byte ", member_end, ") that are not another gzip member");
      inflateReset(&stream);
      continue;
    }
    if (rc == Z_OK || (rc == Z_BUF_ERROR && stream.avail_out == 0)) continue;
    if (rc == Z_MEM_ERROR) fail(KILN_ERR_OUT_OF_MEMORY, "out of memory decompressing ", role, " '", path, "'");
    if (rc == Z_BUF_ERROR)
      fail(KILN_ERR_IO, role, " '", path, "' is a truncated gzip file: the compressed stream ends after ",
           compressed.size(), " bytes without its end marker");
    fail(KILN_ERR_IO, role, " '", path, "' is a corrupt gzip file: ", stream.msg ? stream.msg : "inflate failed");
  }
  out.resize(produced);
  return out;
}

}  // namespace

Bytes read_file(const std::string& path, const char* role) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!file) fail(KILN_ERR_IO, "cannot open ", role, " '", path, "': ", std::strerror(errno));
  Bytes bytes;
  unsigned char chunk[1 << 16];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) bytes.insert(bytes.end(), chunk, chunk + got);
  if (std::ferror(file.get())) fail(KILN_ERR_IO, "cannot read ", role, " '", path, "': ", std::strerror(errno));
  return decode_file_bytes(std::move(bytes), path, role);
}

Bytes decode_file_bytes(Bytes raw, const std::string& path, const char* role) {
  return is_gzip(raw) ? gunzip(raw, path, role) : raw;
}

}  // namespace kiln_data
