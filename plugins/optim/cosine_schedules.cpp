// Cosine annealing (PyTorch's CosineAnnealingLR closed form) and the common
// linear warm-up followed by cosine annealing.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "schedule_type.hpp"

namespace kiln_optim {
namespace {

// From `from` at progress 0 down to `to` at progress 1, along half a cosine.
double cosine_between(double from, double to, double progress) {
  return to + (from - to) * (1 + std::cos(std::numbers::pi * progress)) / 2;
}

struct CosineSchedule {
  static constexpr const char* kName = "cosine";
  static constexpr kiln_attr_spec kConfig[] = {
      {{"t_max", KILN_ATTR_INT, {.i = 0}}, 1, "steps from the base rate down to eta_min (then back up, periodically)"},
      {{"eta_min", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "the lowest rate"},
  };

  explicit CosineSchedule(const Attrs& c) : t_max(c.integer("t_max")), eta_min(c.number("eta_min")) {
    require_above("t_max", double(t_max), 0.0);
  }
  double lr(int64_t step, double base) const { return cosine_between(base, eta_min, double(step) / double(t_max)); }

  int64_t t_max;
  double eta_min;
};

struct WarmupCosineSchedule {
  static constexpr const char* kName = "warmup_cosine";
  static constexpr kiln_attr_spec kConfig[] = {
      {{"warmup_steps", KILN_ATTR_INT, {.i = 0}}, 1, "steps of linear warm-up, ending at the base rate"},
      {{"total_steps", KILN_ATTR_INT, {.i = 0}}, 1, "the step at which the rate reaches eta_min (it stays there)"},
      {{"eta_min", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "the final rate"},
      {{"warmup_start_factor", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "the rate at step 0, as a fraction of the base rate"},
  };

  explicit WarmupCosineSchedule(const Attrs& c)
      : warmup_steps(c.integer("warmup_steps")),
        total_steps(c.integer("total_steps")),
        eta_min(c.number("eta_min")),
        start_factor(c.number("warmup_start_factor")) {
    require_at_least("warmup_steps", double(warmup_steps), 0.0);
    require_above("total_steps", double(total_steps), double(warmup_steps));
  }
  double lr(int64_t step, double base) const {
    if (step < warmup_steps) return base * (start_factor + (1 - start_factor) * double(step) / double(warmup_steps));
    const double progress = double(step - warmup_steps) / double(total_steps - warmup_steps);
    return cosine_between(base, eta_min, std::min(progress, 1.0));
  }

  int64_t warmup_steps, total_steps;
  double eta_min, start_factor;
};

}  // namespace

kiln_lr_schedule_type cosine_schedule_type() { return schedule_type<CosineSchedule>(); }
kiln_lr_schedule_type warmup_cosine_schedule_type() { return schedule_type<WarmupCosineSchedule>(); }

}  // namespace kiln_optim
