// Whole prefixed lines out of arbitrary chunks.
#include "line_prefixer.hpp"

namespace kiln::cli {

std::string LinePrefixer::feed(std::string_view chunk) {
  std::string out;
  while (!chunk.empty()) {
    const size_t newline = chunk.find('\n');
    const size_t room = kMaxLine - partial_.size();
    if (newline == std::string_view::npos && chunk.size() < room) {
      partial_.append(chunk);
      break;
    }
    // A whole line, or a line cut at kMaxLine.
    const size_t take = newline < room ? newline + 1 : room;
    out += prefix_;
    out += partial_;
    out.append(chunk.substr(0, take));
    if (out.back() != '\n') out += '\n';
    partial_.clear();
    chunk.remove_prefix(take);
  }
  return out;
}

std::string LinePrefixer::finish() {
  if (partial_.empty()) return {};
  std::string out = prefix_ + partial_ + '\n';
  partial_.clear();
  return out;
}

}  // namespace kiln::cli
