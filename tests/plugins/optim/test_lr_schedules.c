/* Every learning-rate schedule against its formula (PyTorch's closed forms)
 * at many steps, with the boundaries checked by value, and the
 * configuration errors. */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "kiln_test_support.h"

static const double kPi = 3.14159265358979323846;

static kiln_lr_schedule* make(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n) {
  kiln_lr_schedule* s = NULL;
  CHECK_OK(kiln_lr_schedule_create(rt, type, config, n, &s));
  return s;
}

static double lr_at(const kiln_lr_schedule* s, int64_t step, double base) {
  double lr = NAN;
  CHECK_OK(kiln_lr_schedule_lr(s, step, base, &lr));
  return lr;
}

static void expect(const char* what, const kiln_lr_schedule* s, int64_t step, double base, double want) {
  const double got = s ? lr_at(s, step, base) : NAN;
  if (fabs(got - want) <= 1e-12 + 1e-10 * fabs(want)) return;
  fprintf(stderr, "%s at step %d: %.17g, expected %.17g\n", what, (int)step, got, want);
  CHECK(fabs(got - want) <= 1e-12 + 1e-10 * fabs(want));
}

static void check_step(kiln_runtime* rt) {
  kiln_attr c[2];
  kiln_lr_schedule* s;
  int64_t step;
  c[0] = kiln_attr_int("step_size", 3);
  c[1] = kiln_attr_float("gamma", 0.5);
  s = make(rt, "step", c, 2);
  for (step = 0; step <= 20; ++step) expect("step", s, step, 0.1, 0.1 * pow(0.5, (double)(step / 3)));
  expect("step", s, 2, 0.1, 0.1);
  expect("step", s, 3, 0.1, 0.05);
  expect("step", s, 6, 0.1, 0.025);
  kiln_lr_schedule_release(s);
  /* gamma defaults to 0.1 */
  s = make(rt, "step", c, 1);
  expect("step with default gamma", s, 3, 1.0, 0.1);
  kiln_lr_schedule_release(s);
}

static void check_multi_step(kiln_runtime* rt) {
  /* Unsorted, with a milestone listed twice: it decays twice. */
  const int64_t milestones[4] = {5, 2, 8, 8};
  kiln_attr c[2];
  kiln_lr_schedule* s;
  int64_t step;
  c[0] = kiln_attr_ints("milestones", milestones, 4);
  c[1] = kiln_attr_float("gamma", 0.5);
  s = make(rt, "multi_step", c, 2);
  for (step = 0; step <= 12; ++step) {
    int passed = 0, i;
    for (i = 0; i < 4; ++i) passed += milestones[i] <= step;
    expect("multi_step", s, step, 0.2, 0.2 * pow(0.5, passed));
  }
  expect("multi_step", s, 1, 0.2, 0.2);
  expect("multi_step", s, 2, 0.2, 0.1);
  expect("multi_step", s, 4, 0.2, 0.1);
  expect("multi_step", s, 5, 0.2, 0.05);
  expect("multi_step", s, 7, 0.2, 0.05);
  expect("multi_step", s, 8, 0.2, 0.0125);
  kiln_lr_schedule_release(s);
}

static void check_exponential(kiln_runtime* rt) {
  const kiln_attr gamma = kiln_attr_float("gamma", 0.9);
  kiln_lr_schedule* s = make(rt, "exponential", &gamma, 1);
  int64_t step;
  for (step = 0; step <= 30; ++step) expect("exponential", s, step, 0.3, 0.3 * pow(0.9, (double)step));
  expect("exponential", s, 0, 0.3, 0.3);
  expect("exponential", s, 2, 0.3, 0.3 * 0.81);
  kiln_lr_schedule_release(s);
}

static void check_cosine(kiln_runtime* rt) {
  kiln_attr c[2];
  kiln_lr_schedule* s;
  int64_t step;
  c[0] = kiln_attr_int("t_max", 10);
  c[1] = kiln_attr_float("eta_min", 0.001);
  s = make(rt, "cosine", c, 2);
  for (step = 0; step <= 25; ++step)
    expect("cosine", s, step, 0.1, 0.001 + (0.1 - 0.001) * (1 + cos(kPi * (double)step / 10)) / 2);
  expect("cosine", s, 0, 0.1, 0.1);
  expect("cosine", s, 5, 0.1, (0.1 + 0.001) / 2);
  expect("cosine", s, 10, 0.1, 0.001);
  expect("cosine", s, 20, 0.1, 0.1); /* periodic past t_max, as PyTorch's closed form */
  kiln_lr_schedule_release(s);
}

static double warmup_cosine(int64_t step, double base) {
  const int64_t warmup = 4, total = 12;
  const double eta_min = 0.01, start = 0.1;
  double progress;
  if (step < warmup) return base * (start + (1 - start) * (double)step / (double)warmup);
  progress = (double)(step - warmup) / (double)(total - warmup);
  if (progress > 1) progress = 1;
  return eta_min + (base - eta_min) * (1 + cos(kPi * progress)) / 2;
}

static void check_warmup_cosine(kiln_runtime* rt) {
  kiln_attr c[4];
  kiln_lr_schedule* s;
  int64_t step;
  c[0] = kiln_attr_int("warmup_steps", 4);
  c[1] = kiln_attr_int("total_steps", 12);
  c[2] = kiln_attr_float("eta_min", 0.01);
  c[3] = kiln_attr_float("warmup_start_factor", 0.1);
  s = make(rt, "warmup_cosine", c, 4);
  for (step = 0; step <= 20; ++step) expect("warmup_cosine", s, step, 0.5, warmup_cosine(step, 0.5));
  expect("warmup_cosine", s, 0, 0.5, 0.05);
  expect("warmup_cosine", s, 2, 0.5, 0.5 * (0.1 + 0.9 * 0.5));
  expect("warmup_cosine", s, 4, 0.5, 0.5); /* the end of warm-up is the base rate */
  expect("warmup_cosine", s, 8, 0.5, (0.5 + 0.01) / 2);
  expect("warmup_cosine", s, 12, 0.5, 0.01);
  expect("warmup_cosine", s, 100, 0.5, 0.01); /* it stays at eta_min */
  kiln_lr_schedule_release(s);
  /* Defaults: from 0 up to the base rate, then down to 0. */
  s = make(rt, "warmup_cosine", c, 2);
  expect("warmup_cosine with defaults", s, 0, 0.5, 0.0);
  expect("warmup_cosine with defaults", s, 1, 0.5, 0.125);
  expect("warmup_cosine with defaults", s, 12, 0.5, 0.0);
  kiln_lr_schedule_release(s);
}

/* PyTorch's OneCycleLR.get_lr, two phases. */
static double one_cycle(int64_t step, double max_lr, int64_t total, double pct_start, int cosine) {
  const double initial = max_lr / 25, minimum = initial / 1e4;
  const double ends[2] = {pct_start * (double)total - 1, (double)total - 1};
  const double from[2] = {initial, max_lr}, to[2] = {max_lr, minimum};
  double start = 0;
  int phase;
  for (phase = 0; phase < 2; ++phase) {
    if ((double)step <= ends[phase] || phase == 1) {
      const double pct = ((double)step - start) / (ends[phase] - start);
      return cosine ? to[phase] + (from[phase] - to[phase]) / 2 * (cos(kPi * pct) + 1)
                    : (to[phase] - from[phase]) * pct + from[phase];
    }
    start = ends[phase];
  }
  return NAN;
}

static void check_one_cycle(kiln_runtime* rt) {
  kiln_attr c[3];
  kiln_lr_schedule* s;
  int64_t step;
  c[0] = kiln_attr_float("max_lr", 1.0);
  c[1] = kiln_attr_int("total_steps", 20);
  s = make(rt, "one_cycle", c, 2);
  for (step = 0; step <= 20; ++step) {
    expect("one_cycle", s, step, 0.1, one_cycle(step, 1.0, 20, 0.3, 1));
    /* The base rate is ignored. */
    expect("one_cycle with another base rate", s, step, 123.0, one_cycle(step, 1.0, 20, 0.3, 1));
  }
  expect("one_cycle", s, 0, 0.1, 0.04);
  expect("one_cycle", s, 5, 0.1, 1.0);
  expect("one_cycle", s, 19, 0.1, 0.04 / 1e4);
  CHECK_ERROR(kiln_lr_schedule_lr(s, 21, 0.1, &(double){0}), KILN_ERR_INVALID_ARGUMENT, "lr schedule 'one_cycle'",
              "step 21 is past total_steps 20");
  kiln_lr_schedule_release(s);

  c[2] = kiln_attr_string("anneal", "linear");
  s = make(rt, "one_cycle", c, 3);
  for (step = 0; step <= 20; ++step) expect("one_cycle linear", s, step, 0.1, one_cycle(step, 1.0, 20, 0.3, 0));
  expect("one_cycle linear", s, 0, 0.1, 0.04);
  expect("one_cycle linear", s, 5, 0.1, 1.0);
  expect("one_cycle linear", s, 12, 0.1, 1.0 + (0.04 / 1e4 - 1.0) * 0.5);
  expect("one_cycle linear", s, 19, 0.1, 0.04 / 1e4);
  kiln_lr_schedule_release(s);
}

static void check_errors(kiln_runtime* rt) {
  kiln_lr_schedule* s = NULL;
  kiln_attr c[3];
  double lr = 0;
  c[0] = kiln_attr_int("step_size", 0);
  CHECK_ERROR(kiln_lr_schedule_create(rt, "step", c, 1, &s), KILN_ERR_INVALID_ARGUMENT, "lr schedule 'step'",
              "step_size must be > 0, got 0");
  CHECK_ERROR(kiln_lr_schedule_create(rt, "exponential", NULL, 0, &s), KILN_ERR_INVALID_ARGUMENT, "'gamma'");
  c[0] = kiln_attr_int("t_max", -2);
  CHECK_ERROR(kiln_lr_schedule_create(rt, "cosine", c, 1, &s), KILN_ERR_INVALID_ARGUMENT, "t_max must be > 0");
  c[0] = kiln_attr_int("warmup_steps", 4);
  c[1] = kiln_attr_int("total_steps", 4);
  CHECK_ERROR(kiln_lr_schedule_create(rt, "warmup_cosine", c, 2, &s), KILN_ERR_INVALID_ARGUMENT,
              "total_steps must be > 4, got 4");
  c[0] = kiln_attr_float("max_lr", 1.0);
  c[1] = kiln_attr_int("total_steps", 20);
  c[2] = kiln_attr_string("anneal", "cosine");
  CHECK_ERROR(kiln_lr_schedule_create(rt, "one_cycle", c, 3, &s), KILN_ERR_INVALID_ARGUMENT,
              "anneal must be \"cos\" or \"linear\", got \"cosine\"");
  c[2] = kiln_attr_float("pct_start", 0.05);
  CHECK_ERROR(kiln_lr_schedule_create(rt, "one_cycle", c, 3, &s), KILN_ERR_INVALID_ARGUMENT, "each phase needs a step");
  c[2] = kiln_attr_float("max_lr", 1.0);
  CHECK_ERROR(kiln_lr_schedule_create(rt, "one_cycle", c, 3, &s), KILN_ERR_INVALID_ARGUMENT, "given twice");
  CHECK_ERROR(kiln_lr_schedule_create(rt, "cyclic", NULL, 0, &s), KILN_ERR_NOT_FOUND, "cyclic");
  CHECK(s == NULL);

  c[0] = kiln_attr_float("gamma", 0.5);
  s = make(rt, "exponential", c, 1);
  CHECK_ERROR(kiln_lr_schedule_lr(s, -1, 0.1, &lr), KILN_ERR_INVALID_ARGUMENT, "step is -1");
  CHECK_ERROR(kiln_lr_schedule_lr(s, 1, 0.1, NULL), KILN_ERR_INVALID_ARGUMENT, "'out'");
  kiln_lr_schedule_release(s);
  kiln_lr_schedule_release(NULL);
}

int main(void) {
  kiln_runtime* rt = NULL;
  CHECK_OK(kts_runtime_create(1, &rt));
  check_step(rt);
  check_multi_step(rt);
  check_exponential(rt);
  check_cosine(rt);
  check_warmup_cosine(rt);
  check_one_cycle(rt);
  check_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/optim/lr_schedules");
}
