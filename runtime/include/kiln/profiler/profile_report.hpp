// What a profile (kiln/profiler/profiler.hpp) tells: a table of time per op,
// and a Chrome trace of every call for Perfetto or chrome://tracing.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kiln/profiler/profiler.hpp"

namespace kiln {

// The calls of one op in one phase, summed.
struct ProfileRow {
  std::string name;
  ProfilePhase phase = ProfilePhase::forward;
  int64_t calls = 0;
  int64_t total_ns = 0;  // inclusive of the ops it called
  int64_t self_ns = 0;   // exclusive of them
};

// One row per (name, phase) of the op calls (spans are left out): forward
// rows first, then backward, each by total time, largest first.
std::vector<ProfileRow> profile_summary(std::span<const ProfileEvent> events);

// The summary as a text table, forward and backward apart:
//   op  phase  calls  total ms  self ms  mean µs  % total
// "% total" is the row's total time against the self time of all calls
// (the time profiled ops ran, counted once), so nested rows may add up to
// more than 100. Ends with the forward and backward sums.
std::string profile_table(std::span<const ProfileEvent> events);

// Writes the events as Chrome trace JSON ("traceEvents", one complete "X"
// event per call with ts and dur in µs, pid, tid and args: device, depth,
// self time, input shapes; one per span, "cat" "span") to `path`,
// atomically: a failure leaves the path as it was and throws Status::io
// naming it. Each thread is a track (tid = its number) named by
// `thread_names` (Profiler::thread_names(); "thread <n>" when unnamed);
// each named span track follows them with tids of its own. The names are
// metadata ("M") events.
void write_chrome_trace(std::span<const ProfileEvent> events, const std::string& path,
                        std::span<const std::string> thread_names = {});
// The last finished profile of `profiler`, with its threads' names.
void write_chrome_trace(const Profiler& profiler, const std::string& path);
// The same JSON text, for callers that keep it in memory.
std::string chrome_trace_json(std::span<const ProfileEvent> events, std::span<const std::string> thread_names = {});

}  // namespace kiln
