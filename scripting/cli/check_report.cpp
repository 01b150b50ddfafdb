#include "check_report.hpp"

#include <cstdio>

namespace kiln::cli {

void CheckReport::record(const std::string& subject, const std::string& check, const Outcome& outcome) {
  const char* label = "PASS";
  if (outcome.verdict == Verdict::kPass) ++passed_;
  if (outcome.verdict == Verdict::kFail) ++failed_, label = "FAIL";
  if (outcome.verdict == Verdict::kSkip) ++skipped_, label = "SKIP";
  std::printf("%s  %s: %s%s%s\n", label, subject.c_str(), check.c_str(), outcome.detail.empty() ? "" : ": ",
              outcome.detail.c_str());
}

bool CheckReport::print_summary() const {
  std::printf("%d passed, %d failed, %d skipped\n", passed_, failed_, skipped_);
  return failed_ == 0;
}

}  // namespace kiln::cli
