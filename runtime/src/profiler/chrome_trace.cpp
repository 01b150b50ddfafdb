// A profile as Chrome trace JSON (the "Trace Event Format" that Perfetto and
// chrome://tracing read), written atomically.
#include <algorithm>
#include <cstdio>
#include <map>
#include <unistd.h>

#include "../checkpoint/atomic_file.hpp"
#include "../checkpoint/json_writer.hpp"
#include "kiln/profiler/profile_report.hpp"

namespace kiln {
namespace {

// Nanoseconds as the format's microseconds, keeping the nanoseconds.
void append_us(std::string* out, int64_t ns) {
  char text[32];
  const int n = std::snprintf(text, sizeof text, "%lld.%03lld", static_cast<long long>(ns / 1000),
                              static_cast<long long>(ns % 1000));
  out->append(text, size_t(n));
}

void append_shapes(std::string* out, const std::vector<Shape>& shapes) {
  *out += '[';
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i) *out += ',';
    *out += '[';
    for (int d = 0; d < shapes[i].rank(); ++d) {
      if (d) *out += ',';
      *out += std::to_string(shapes[i][d]);
    }
    *out += ']';
  }
  *out += ']';
}

// Tracks: one per recording thread (tid = its number), then one per named
// span track, numbered after the threads in the order first seen.
class Tracks {
 public:
  Tracks(std::span<const ProfileEvent> events, std::span<const std::string> thread_names) {
    for (const ProfileEvent& e : events) threads_ = std::max(threads_, e.thread);
    threads_ = std::max(threads_, int(thread_names.size()));
    for (int t = 1; t <= threads_; ++t) {
      const bool named = size_t(t) <= thread_names.size() && !thread_names[size_t(t - 1)].empty();
      names_.push_back(named ? thread_names[size_t(t - 1)] : "thread " + std::to_string(t));
    }
    for (const ProfileEvent& e : events)
      if (!e.track.empty() && !named_tracks_.count(e.track)) {
        named_tracks_[e.track] = int(names_.size()) + 1;
        names_.push_back(e.track);
      }
  }

  int tid(const ProfileEvent& e) const { return e.track.empty() ? e.thread : named_tracks_.at(e.track); }
  // Name of track `tid`, for tid 1 to count().
  const std::string& name(int tid) const { return names_[size_t(tid - 1)]; }
  int count() const { return int(names_.size()); }

 private:
  int threads_ = 0;
  std::vector<std::string> names_;
  std::map<std::string, int> named_tracks_;
};

void append_metadata(std::string* out, const std::string& pid, int tid, const char* kind, const std::string& name) {
  *out += ",\n{\"name\":\"";
  *out += kind;
  *out += "\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":";
  checkpoint::append_json_string(out, name);
  *out += "}}";
}

void append_event(std::string* out, const ProfileEvent& e, const std::string& pid, int tid) {
  *out += "{\"name\":";
  checkpoint::append_json_string(out, e.name);
  *out += ",\"cat\":\"";
  *out += e.span ? "span" : phase_name(e.phase);
  *out += "\",\"ph\":\"X\",\"pid\":" + pid + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
  append_us(out, e.start_ns);
  *out += ",\"dur\":";
  append_us(out, e.total_ns());
  if (e.span) {
    *out += "}";
    return;
  }
  *out += ",\"args\":{\"device\":\"" + to_string(e.device) + "\",\"depth\":" + std::to_string(e.depth) +
          ",\"self_us\":";
  append_us(out, e.self_ns());
  *out += ",\"input_shapes\":";
  append_shapes(out, e.input_shapes);
  *out += "}}";
}

}  // namespace

std::string chrome_trace_json(std::span<const ProfileEvent> events, std::span<const std::string> thread_names) {
  // The real process id, so that traces of several ranks merge side by side.
  const std::string pid = std::to_string(static_cast<long long>(::getpid()));
  const Tracks tracks(events, thread_names);
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":0,\"args\":{\"name\":\"kiln\"}}";
  for (int tid = 1; tid <= tracks.count(); ++tid) append_metadata(&out, pid, tid, "thread_name", tracks.name(tid));
  for (const ProfileEvent& e : events) {
    out += ",\n";
    append_event(&out, e, pid, tracks.tid(e));
  }
  out += "\n]}\n";
  return out;
}

void write_chrome_trace(std::span<const ProfileEvent> events, const std::string& path,
                        std::span<const std::string> thread_names) {
  const std::string json = chrome_trace_json(events, thread_names);
  checkpoint::AtomicFileWriter file(path);
  file.write(json.data(), json.size());
  file.commit();
}

void write_chrome_trace(const Profiler& profiler, const std::string& path) {
  const std::vector<ProfileEvent> events = profiler.events();
  const std::vector<std::string> names = profiler.thread_names();
  write_chrome_trace(events, path, names);
}

}  // namespace kiln
