// Schedules that multiply the rate by gamma at fixed points: every
// step_size steps (StepLR), at milestones (MultiStepLR), every step
// (ExponentialLR); PyTorch's closed forms.
#include <algorithm>
#include <cmath>
#include <vector>

#include "schedule_type.hpp"

namespace kiln_optim {
namespace {

struct StepSchedule {
  static constexpr const char* kName = "step";
  static constexpr kiln_attr_spec kConfig[] = {
      {{"step_size", KILN_ATTR_INT, {.i = 0}}, 1, "steps between two decays"},
      {{"gamma", KILN_ATTR_FLOAT, {.f = 0.1}}, 0, "factor of each decay"},
  };

  explicit StepSchedule(const Attrs& c) : step_size(c.integer("step_size")), gamma(c.number("gamma")) {
    require_above("step_size", double(step_size), 0.0);
  }
  double lr(int64_t step, double base) const { return base * std::pow(gamma, double(step / step_size)); }

  int64_t step_size;
  double gamma;
};

struct MultiStepSchedule {
  static constexpr const char* kName = "multi_step";
  static constexpr kiln_attr_spec kConfig[] = {
      {{"milestones", KILN_ATTR_INTS, {.ints = {nullptr, 0}}},
       1,
       "steps at which the rate is multiplied by gamma (a step listed twice decays twice)"},
      {{"gamma", KILN_ATTR_FLOAT, {.f = 0.1}}, 0, "factor of each decay"},
  };

  explicit MultiStepSchedule(const Attrs& c) : milestones(c.integers("milestones")), gamma(c.number("gamma")) {
    std::sort(milestones.begin(), milestones.end());
  }
  double lr(int64_t step, double base) const {
    const auto passed = std::upper_bound(milestones.begin(), milestones.end(), step) - milestones.begin();
    return base * std::pow(gamma, double(passed));
  }

  std::vector<int64_t> milestones;  // sorted
  double gamma;
};

struct ExponentialSchedule {
  static constexpr const char* kName = "exponential";
  static constexpr kiln_attr_spec kConfig[] = {
      {{"gamma", KILN_ATTR_FLOAT, {.f = 0.0}}, 1, "factor applied at every step"},
  };

  explicit ExponentialSchedule(const Attrs& c) : gamma(c.number("gamma")) {}
  double lr(int64_t step, double base) const { return base * std::pow(gamma, double(step)); }

  double gamma;
};

}  // namespace

kiln_lr_schedule_type step_schedule_type() { return schedule_type<StepSchedule>(); }
kiln_lr_schedule_type multi_step_schedule_type() { return schedule_type<MultiStepSchedule>(); }
kiln_lr_schedule_type exponential_schedule_type() { return schedule_type<ExponentialSchedule>(); }

}  // namespace kiln_optim
