// The profile summed per op and phase, and its text table
// (kiln/profiler/profile_report.hpp).
#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "kiln/profiler/profile_report.hpp"

namespace kiln {
namespace {

void append_format(std::string* out, const char* format, auto... values) {
  char line[512];
  const int n = std::snprintf(line, sizeof line, format, values...);
  if (n > 0) out->append(line, std::min(size_t(n), sizeof line - 1));
}

void append_padded(std::string* out, const std::string& text, size_t width) {
  *out += text;
  out->append(width > text.size() ? width - text.size() : 0, ' ');
}

}  // namespace

std::vector<ProfileRow> profile_summary(std::span<const ProfileEvent> events) {
  std::map<std::pair<ProfilePhase, std::string>, ProfileRow> rows;
  for (const ProfileEvent& e : events) {
    if (e.span) continue;  // not an op
    ProfileRow& row = rows[{e.phase, e.name}];
    row.name = e.name;
    row.phase = e.phase;
    ++row.calls;
    row.total_ns += e.total_ns();
    row.self_ns += e.self_ns();
  }
  std::vector<ProfileRow> out;
  out.reserve(rows.size());
  for (auto& entry : rows) out.push_back(std::move(entry.second));
  std::stable_sort(out.begin(), out.end(), [](const ProfileRow& a, const ProfileRow& b) {
    return a.phase != b.phase ? a.phase < b.phase : a.total_ns > b.total_ns;
  });
  return out;
}

std::string profile_table(std::span<const ProfileEvent> events) {
  const std::vector<ProfileRow> rows = profile_summary(events);
  int64_t self_sum = 0, phase_self[2] = {0, 0};
  size_t name_width = 2;  // "op"
  for (const ProfileRow& row : rows) {
    self_sum += row.self_ns;
    phase_self[int(row.phase)] += row.self_ns;
    name_width = std::max(name_width, row.name.size());
  }
  std::string out;
  append_padded(&out, "op", name_width);
  out += "  phase        calls     total ms      self ms      mean µs  % total\n";
  ProfilePhase section = ProfilePhase::forward;
  for (const ProfileRow& row : rows) {
    if (row.phase != section) out += '\n';  // forward and backward apart
    section = row.phase;
    append_padded(&out, row.name, name_width);
    append_format(&out, "  %-8s %9lld %12.3f %12.3f %12.2f %8.1f\n", phase_name(row.phase),
                  static_cast<long long>(row.calls), double(row.total_ns) / 1e6, double(row.self_ns) / 1e6,
                  double(row.total_ns) / 1e3 / double(row.calls),
                  self_sum > 0 ? 100.0 * double(row.total_ns) / double(self_sum) : 0.0);
  }
  append_format(&out, "\nforward %.3f ms, backward %.3f ms (self time of %zu profiled calls)\n",
                double(phase_self[0]) / 1e6, double(phase_self[1]) / 1e6, events.size());
  return out;
}

}  // namespace kiln
