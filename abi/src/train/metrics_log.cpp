#include "train/metrics_log.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>

#include "kiln/error.hpp"

namespace kiln::train {
namespace {

// JSON has no NaN or infinity: a diverged loss is written as null.
std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

}  // namespace

MetricsLog::MetricsLog(const char* path) {
  if (!path) return;
  path_ = path;
  file_ = std::fopen(path, "w");
  KILN_CHECK(file_, Status::io, "cannot open the metrics file '", path_, "' for writing: ", std::strerror(errno));
}

MetricsLog::~MetricsLog() {
  if (file_) std::fclose(file_);
}

void MetricsLog::write(const kiln_step_metrics& m) {
  write_line(str_cat(R"({"kind":"step","step":)", m.step, R"(,"epoch":)", m.epoch, R"(,"loss":)",
                     json_number(m.loss), R"(,"lr":)", json_number(m.lr), R"(,"grad_norm":)",
                     json_number(m.grad_norm), R"(,"samples":)", m.samples, R"(,"step_seconds":)",
                     json_number(m.step_seconds), R"(,"input_wait_seconds":)", json_number(m.input_wait_seconds),
                     R"(,"samples_per_second":)", json_number(m.samples_per_second),
                     R"(,"device_input_wait_seconds":)", json_number(m.device_input_wait_seconds),
                     R"(,"loss_scale":)", json_number(m.loss_scale), R"(,"skipped":)", m.skipped,
                     R"(,"peak_cpu_bytes":)", m.peak_cpu_bytes, R"(,"peak_gpu_bytes":)", m.peak_gpu_bytes,
                     R"(,"forward_seconds":)", json_number(m.forward_seconds), R"(,"backward_seconds":)",
                     json_number(m.backward_seconds), R"(,"communication_seconds":)",
                     json_number(m.communication_seconds), R"(,"optimizer_seconds":)",
                     json_number(m.optimizer_seconds), R"(,"other_seconds":)", json_number(m.other_seconds),
                     R"(,"flops":)", json_number(m.flops),
                     "}\n"));
}

void MetricsLog::write(const kiln_eval_metrics& m) {
  write_line(str_cat(R"({"kind":"eval","step":)", m.step, R"(,"epoch":)", m.epoch, R"(,"loss":)",
                     json_number(m.loss), R"(,"accuracy":)", json_number(m.accuracy), R"(,"samples":)", m.samples,
                     R"(,"seconds":)", json_number(m.seconds), "}\n"));
}

void MetricsLog::write_line(const std::string& line) {
  if (!file_) return;
  const bool written = std::fwrite(line.data(), 1, line.size(), file_) == line.size() && std::fflush(file_) == 0;
  KILN_CHECK(written, Status::io, "cannot write to the metrics file '", path_, "': ", std::strerror(errno));
}

}  // namespace kiln::train
