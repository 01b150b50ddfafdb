// The outcome of each check of `kiln plugin-check`, printed one line each
// as it is recorded, and counted for the summary and the exit code.
#pragma once

#include <string>

namespace kiln::cli {

enum class Verdict { kPass, kFail, kSkip };

struct Outcome {
  Verdict verdict;
  std::string detail;  // what was checked, what differed, or why it was skipped
};

class CheckReport {
 public:
  // Prints "PASS|FAIL|SKIP  <subject>: <check>[: <detail>]".
  void record(const std::string& subject, const std::string& check, const Outcome& outcome);
  // "N passed, M failed, K skipped"; true when nothing failed.
  bool print_summary() const;

 private:
  int passed_ = 0;
  int failed_ = 0;
  int skipped_ = 0;
};

}  // namespace kiln::cli
