#include "train/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "kiln/util/str_cat.hpp"

namespace kiln::train {
namespace {

constexpr int kBarWidth = 24;
// Redrawing more often than this only costs time on slow terminals.
constexpr std::chrono::milliseconds kBarInterval{100};

std::string format(const char* fmt, double v) {
  char text[32];
  std::snprintf(text, sizeof text, fmt, v);
  return text;
}

// Small rates (1e-5) would read as 0.0000 in fixed notation.
std::string format_lr(double lr) { return format(lr >= 1e-3 ? "%.4f" : "%.3e", lr); }

std::string format_duration(double seconds) {
  const int64_t s = seconds > 0 ? int64_t(seconds + 0.5) : 0;
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60),
                  (long long)(s % 60));
  else
    std::snprintf(text, sizeof text, "%lld:%02lld", (long long)(s / 60), (long long)(s % 60));
  return text;
}

}  // namespace

Progress::Progress(int option, const ProgressPlan& plan) : plan_(plan) {
  switch (option) {
    case 0: mode_ = isatty(fileno(stderr)) ? Mode::bar : Mode::lines; break;
    case 1: mode_ = Mode::bar; break;
    case 2: mode_ = Mode::lines; break;
    default: mode_ = Mode::quiet; break;
  }
}

void Progress::step(const kiln_step_metrics& m, double epoch_seconds) {
  if (mode_ == Mode::bar) draw_bar(m, epoch_seconds);
  if (mode_ == Mode::lines && m.step % plan_.log_every == 0)
    print_line(str_cat("epoch ", m.epoch + 1, "/", plan_.epochs, " step ", m.epoch_step, "/", plan_.steps_per_epoch,
                       " loss ", format("%.4f", m.loss), " lr ", format_lr(m.lr), " ",
                       format("%.1f", m.samples_per_second), " samples/s"));
}

void Progress::draw_bar(const kiln_step_metrics& m, double epoch_seconds) {
  const auto now = std::chrono::steady_clock::now();
  const bool epoch_done = m.epoch_step >= plan_.steps_per_epoch;
  if (!epoch_done && bar_on_line_ && now - last_draw_ < kBarInterval) return;
  last_draw_ = now;
  const int filled = int(kBarWidth * std::min<int64_t>(m.epoch_step, plan_.steps_per_epoch) / plan_.steps_per_epoch);
  const double seconds_per_step = epoch_seconds / double(m.epoch_step);
  const double left = double(std::max<int64_t>(plan_.total_steps - m.step, 0)) * seconds_per_step;
  std::fprintf(stderr, "\repoch %lld/%lld [%s%s] step %lld/%lld loss %.4f %.1f samples/s ETA %s\x1b[K",
               (long long)(m.epoch + 1), (long long)plan_.epochs, std::string(size_t(filled), '=').c_str(),
               std::string(size_t(kBarWidth - filled), ' ').c_str(), (long long)m.epoch_step,
               (long long)plan_.steps_per_epoch, m.loss, m.samples_per_second, format_duration(left).c_str());
  std::fflush(stderr);
  bar_on_line_ = true;
}

void Progress::end_epoch() { leave_bar_line(); }

void Progress::leave_bar_line() {
  if (!bar_on_line_) return;
  std::fputc('\n', stderr);
  bar_on_line_ = false;
}

void Progress::eval(const kiln_eval_metrics& m) {
  if (mode_ == Mode::quiet) return;
  const std::string accuracy = m.accuracy < 0 ? "" : str_cat(" accuracy ", format("%.4f", m.accuracy));
  print_line(str_cat("eval epoch ", m.epoch + 1, " step ", m.step, ": loss ", format("%.4f", m.loss), accuracy, " (",
                     m.samples, " samples, ", format("%.1f", m.seconds), " s)"));
}

void Progress::print_line(const std::string& line) {
  leave_bar_line();
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

}  // namespace kiln::train
