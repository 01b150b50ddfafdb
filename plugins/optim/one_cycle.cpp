// The 1cycle policy of PyTorch's OneCycleLR (two phases): from
// max_lr / div_factor up to max_lr over the first pct_start of the steps,
// then down to max_lr / div_factor / final_div_factor at step
// total_steps - 1. The rates are fixed by max_lr: the base rate given to
// kiln_lr_schedule_lr is ignored.
#include <cmath>
#include <numbers>
#include <string>

#include "schedule_type.hpp"

namespace kiln_optim {
namespace {

struct OneCycleSchedule {
  static constexpr const char* kName = "one_cycle";
  static constexpr kiln_attr_spec kConfig[] = {
      {{"max_lr", KILN_ATTR_FLOAT, {.f = 0.0}}, 1, "the peak rate (the base rate is ignored)"},
      {{"total_steps", KILN_ATTR_INT, {.i = 0}}, 1, "steps in the cycle"},
      {{"pct_start", KILN_ATTR_FLOAT, {.f = 0.3}}, 0, "fraction of the steps spent increasing the rate"},
      {{"div_factor", KILN_ATTR_FLOAT, {.f = 25.0}}, 0, "the initial rate is max_lr / div_factor"},
      {{"final_div_factor", KILN_ATTR_FLOAT, {.f = 1e4}},
       0,
       "the final rate is max_lr / div_factor / final_div_factor"},
      {{"anneal", KILN_ATTR_STRING, {.s = "cos"}}, 0, "\"cos\" or \"linear\" annealing"},
  };

  explicit OneCycleSchedule(const Attrs& c)
      : total_steps(c.integer("total_steps")),
        max_lr(c.number("max_lr")),
        initial_lr(max_lr / c.number("div_factor")),
        min_lr(initial_lr / c.number("final_div_factor")),
        warmup_end(c.number("pct_start") * double(total_steps) - 1),
        cosine(c.text("anneal") == "cos") {
    require_above("total_steps", double(total_steps), 0.0);
    require_at_least("pct_start", c.number("pct_start"), 0.0);
    require_at_least("pct_start", 1.0, c.number("pct_start"));
    require_above("div_factor", c.number("div_factor"), 0.0);
    require_above("final_div_factor", c.number("final_div_factor"), 0.0);
    if (!cosine && c.text("anneal") != "linear")
      fail(KILN_ERR_INVALID_ARGUMENT, "anneal must be \"cos\" or \"linear\", got \"" + c.text("anneal") + "\"");
    // Each phase needs at least one step to divide by.
    if (!(warmup_end > 0 && warmup_end < double(total_steps - 1)))
      fail(KILN_ERR_INVALID_ARGUMENT,
           "pct_start * total_steps - 1 must lie strictly between 0 and total_steps - 1 "
           "(each phase needs a step), got " +
               to_text(warmup_end));
  }

  double anneal(double from, double to, double pct) const {
    if (cosine) return to + (from - to) / 2 * (std::cos(std::numbers::pi * pct) + 1);
    return (to - from) * pct + from;
  }

  double lr(int64_t step, double) const {
    if (step > total_steps)
      fail(KILN_ERR_INVALID_ARGUMENT, "step " + to_text(step) + " is past total_steps " + to_text(total_steps));
    const double s = double(step);
    if (s <= warmup_end) return anneal(initial_lr, max_lr, s / warmup_end);
    return anneal(max_lr, min_lr, (s - warmup_end) / (double(total_steps - 1) - warmup_end));
  }

  int64_t total_steps;
  double max_lr, initial_lr, min_lr;
  double warmup_end;  // the step at which the rate peaks (PyTorch's end_step of phase one)
  bool cosine;
};

}  // namespace

kiln_lr_schedule_type one_cycle_schedule_type() { return schedule_type<OneCycleSchedule>(); }

}  // namespace kiln_optim
