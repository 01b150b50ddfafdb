// Cuts what a process writes into lines and puts a prefix before each, for
// `kiln launch`, which copies every rank's output as "[rank R] line".
//
//   LinePrefixer p("[rank 1] ");
//   p.feed("loss 0.3\nloss 0.");  // "[rank 1] loss 0.3\n"
//   p.feed("2\n");                // "[rank 1] loss 0.2\n"
//   p.finish();                   // "" (what is left, with a newline added)
//
// Only whole lines come out, so that a caller that writes each result at
// once never mixes two sources in the middle of a line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace kiln::cli {

class LinePrefixer {
 public:
  // A line that grows past this without a newline comes out cut at this
  // length, so that a process writing no newline cannot fill the memory.
  static constexpr size_t kMaxLine = size_t{1} << 20;

  explicit LinePrefixer(std::string prefix) : prefix_(std::move(prefix)) {}

  // The lines that `chunk` completes, each prefixed and ending in '\n'.
  std::string feed(std::string_view chunk);
  // The unfinished last line, prefixed and given its '\n'; "" when there is none.
  std::string finish();

 private:
  std::string prefix_;
  std::string partial_;  // the line being received, without its prefix
};

}  // namespace kiln::cli
