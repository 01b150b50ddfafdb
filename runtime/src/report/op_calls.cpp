// The op calls of a profiled step, as the report's "ops" advice reads them.
#include <algorithm>
#include <map>

#include "kiln/report/training_report.hpp"

namespace kiln::report {
namespace {

constexpr size_t kTopOps = 3;

}  // namespace

OpCallSummary summarise_op_calls(std::span<const ProfileEvent> events) {
  OpCallSummary s;
  std::map<std::string, OpShare> by_name;
  for (const ProfileEvent& e : events) {
    if (e.span) continue;
    const double self = double(e.self_ns()) * 1e-9;
    OpShare& op = by_name[e.name];
    op.name = e.name;
    op.calls += 1;
    op.seconds += self;
    s.calls += 1;
    s.seconds += self;
    if (double(e.total_ns()) * 1e-9 < kShortOpSeconds) {
      s.short_calls += 1;
      s.short_seconds += self;
    }
  }
  for (auto& entry : by_name) s.top_ops.push_back(std::move(entry.second));
  std::sort(s.top_ops.begin(), s.top_ops.end(), [](const OpShare& a, const OpShare& b) { return a.seconds > b.seconds; });
  if (s.top_ops.size() > kTopOps) s.top_ops.resize(kTopOps);
  return s;
}

}  // namespace kiln::report
