// A profile as Chrome trace JSON (the "Trace Event Format" that Perfetto and
// chrome://tracing read), written atomically.
#include <cstdio>
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

void append_event(std::string* out, const ProfileEvent& e, const std::string& pid) {
  *out += "{\"name\":";
  checkpoint::append_json_string(out, e.name);
  *out += ",\"cat\":\"";
  *out += phase_name(e.phase);
  *out += "\",\"ph\":\"X\",\"pid\":" + pid + ",\"tid\":" + std::to_string(e.thread) + ",\"ts\":";
  append_us(out, e.start_ns);
  *out += ",\"dur\":";
  append_us(out, e.total_ns());
  *out += ",\"args\":{\"device\":\"" + to_string(e.device) + "\",\"depth\":" + std::to_string(e.depth) +
          ",\"self_us\":";
  append_us(out, e.self_ns());
  *out += ",\"input_shapes\":";
  append_shapes(out, e.input_shapes);
  *out += "}}";
}

}  // namespace

std::string chrome_trace_json(std::span<const ProfileEvent> events) {
  // The real process id, so that traces of several ranks merge side by side.
  const std::string pid = std::to_string(static_cast<long long>(::getpid()));
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":0,\"args\":{\"name\":\"kiln\"}}";
  for (const ProfileEvent& e : events) {
    out += ",\n";
    append_event(&out, e, pid);
  }
  out += "\n]}\n";
  return out;
}

void write_chrome_trace(std::span<const ProfileEvent> events, const std::string& path) {
  const std::string json = chrome_trace_json(events);
  checkpoint::AtomicFileWriter file(path);
  file.write(json.data(), json.size());
  file.commit();
}

}  // namespace kiln
