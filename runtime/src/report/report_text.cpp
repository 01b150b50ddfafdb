// The report as text: a table of the split, throughput, utilisation and
// memory, then the advice.
#include <cmath>
#include <cstdio>

#include "kiln/report/training_report.hpp"
#include "report_format.hpp"

namespace kiln::report {

StepSplit& StepSplit::operator+=(const StepSplit& s) {
  input_wait += s.input_wait;
  forward += s.forward;
  backward += s.backward;
  communication += s.communication;
  optimizer += s.optimizer;
  other += s.other;
  return *this;
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string milliseconds(double seconds) { return fixed(seconds * 1e3, 2) + " ms"; }

std::string percent(double fraction) { return fixed(fraction * 100.0, 1) + "%"; }

std::string bytes(int64_t count) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = double(count);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(units)) {
    value /= 1024.0;
    ++unit;
  }
  return unit == 0 ? str_cat(count, " B") : str_cat(fixed(value, 1), " ", units[unit]);
}

std::string flops_rate(double per_second) {
  return per_second >= 1e12 ? fixed(per_second * 1e-12, 2) + " TFLOP/s" : fixed(per_second * 1e-9, 1) + " GFLOP/s";
}

namespace {

// "    forward          12.00 ms   27.8%"
std::string split_row(const char* name, double seconds, const RunTotals& t) {
  char text[128];
  const double total = t.seconds.total();
  std::snprintf(text, sizeof text, "    %-14s %10s %7s\n", name, milliseconds(seconds / double(t.steps)).c_str(),
                percent(total > 0.0 ? seconds / total : 0.0).c_str());
  return text;
}

std::string utilisation(const RunTotals& t, const RunSetup& s) {
  const double total = t.seconds.total();
  if (t.flops <= 0.0 || total <= 0.0) return "not measured (the ops did not report their arithmetic)";
  const double rate = t.flops / total;
  std::string line = str_cat(flops_rate(rate), " achieved");
  if (s.peak_flops > 0.0)
    line += str_cat(", ", percent(rate / s.peak_flops), " of the device's ", flops_rate(s.peak_flops), " ",
                    s.precision, " peak");
  return line;
}

std::string memory(const RunTotals& t, const RunSetup& s) {
  std::string line = str_cat("peak ", bytes(t.peak_bytes), " on ", s.device);
  if (s.memory_capacity > 0)
    line += str_cat(" of ", bytes(s.memory_capacity), " (", percent(double(t.peak_bytes) / double(s.memory_capacity)),
                    "; headroom ", bytes(s.memory_capacity - t.peak_bytes), ")");
  return line;
}

}  // namespace

std::string format_report(const RunTotals& t, const RunSetup& s) {
  if (t.steps <= 0) return "training report: no step to report (the first step is left out: it builds kernels)\n";
  const StepSplit& x = t.seconds;
  std::string text = str_cat("training report: ", t.steps, " steps after the first, ", t.samples, " samples, on ",
                             s.device, ", ", s.precision, "\n");
  text += str_cat("  step time        ", milliseconds(x.total() / double(t.steps)), " (mean)\n");
  text += split_row("input wait", x.input_wait, t);
  text += split_row("forward", x.forward, t);
  text += split_row("backward", x.backward, t);
  if (s.world_size > 1) text += split_row("communication", x.communication, t);
  text += split_row("optimizer", x.optimizer, t);
  text += split_row("other", x.other, t);
  text += str_cat("  throughput       ", fixed(x.total() > 0.0 ? double(t.samples) / x.total() : 0.0, 1),
                  " samples/s\n");
  text += str_cat("  utilisation      ", utilisation(t, s), "\n");
  text += str_cat("  memory           ", memory(t, s), "\n");
  const std::vector<Advice> advice = advise(t, s);
  if (advice.empty()) return text + "advice: none; nothing measured points to a change\n";
  text += "advice:\n";
  for (const Advice& a : advice) text += str_cat("  - ", a.topic, ": ", a.text, "\n");
  return text;
}

}  // namespace kiln::report
