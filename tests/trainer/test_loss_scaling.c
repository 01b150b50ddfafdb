/* Dynamic loss scaling (kiln_trainer_options.loss_scaling and
 * loss_scale_*): bad settings are refused naming them; it is on by default
 * for f16 only; a step whose gradients hold NaN is skipped (parameters,
 * AdamW's state and the schedule equal a run that never saw that batch)
 * and halves the scale, once per optimizer step however many micro-batches
 * it accumulates; NaN that never goes away stops training at the minimum
 * scale; the scale grows after its interval of clean steps; clipping sees
 * the unscaled gradient; and a resumed run continues with the same scale
 * and count, bit for bit. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "trainer_support.h"

#define B 8
#define MAX_STEPS 12

/* Everything one run owns, with the metrics of each of its steps. */
typedef struct run {
  kiln_runtime* rt;
  blobs data;
  kiln_loader* train;
  kiln_module* model;
  kiln_optimizer* opt;
  kiln_lr_schedule* schedule;
  kiln_trainer_options o;
  kiln_step_metrics steps[MAX_STEPS];
  int n_steps;
} run;

static int record_step(void* user, const kiln_step_metrics* m) {
  run* r = (run*)user;
  if (r->n_steps < MAX_STEPS) r->steps[r->n_steps++] = *m;
  return 0;
}

static kiln_optimizer* make_adamw(kiln_runtime* rt, kiln_module* model) {
  kiln_tensor* params[2] = {NULL, NULL};
  const kiln_attr hyper[2] = {kiln_attr_float("lr", 0.05), kiln_attr_float("weight_decay", 0.01)};
  kiln_optimizer* opt = NULL;
  const char* name = NULL;
  size_t i;
  for (i = 0; i < 2; ++i) REQUIRE_OK(kiln_module_parameter(model, i, &name, &params[i]));
  REQUIRE_OK(kiln_optimizer_create(rt, "AdamW", params, 2, hyper, 2, &opt));
  for (i = 0; i < 2; ++i) kiln_tensor_release(params[i]);
  return opt;
}

/* `batches` batches of B points in order, with NaN inputs in batch
 * `poisoned` (-1: none), then `dropped` batches from batch `first_dropped`
 * removed (the same points as a poisoned run's, less some); AdamW under a
 * warm-up cosine schedule; loss scaling forced on from a scale of 1024 that
 * would take 1000 clean steps to grow; the model drawn from `seed`. */
static void run_open(run* r, uint64_t seed, int64_t batches, int poisoned, int first_dropped, int dropped) {
  const kiln_attr schedule[2] = {kiln_attr_int("warmup_steps", 2), kiln_attr_int("total_steps", 20)};
  memset(r, 0, sizeof *r);
  r->rt = open_runtime(seed);
  blobs_make(r->rt, batches * B, 5, &r->data);
  if (poisoned >= 0) blobs_poison(r->rt, &r->data, poisoned * B, B);
  if (dropped > 0) blobs_drop(r->rt, &r->data, first_dropped * B, dropped * B);
  r->train = make_loader(&r->data, B, 0);
  r->model = make_linear(r->rt);
  r->opt = make_adamw(r->rt, r->model);
  REQUIRE_OK(kiln_lr_schedule_create(r->rt, "warmup_cosine", schedule, 2, &r->schedule));
  r->o = trainer_options(r->model, r->opt, r->train);
  r->o.schedule = r->schedule;
  r->o.on_step = record_step;
  r->o.user_data = r;
  r->o.loss_scaling = 1;
  r->o.loss_scale_init = 1024;
  r->o.loss_scale_interval = 1000;
}

static void run_close(run* r) {
  kiln_lr_schedule_release(r->schedule);
  kiln_optimizer_release(r->opt);
  kiln_module_release(r->model);
  kiln_loader_release(r->train);
  blobs_free(&r->data);
  kiln_runtime_release(r->rt);
}

/* Trains with r->o as it stands; the status (that of creating the trainer
 * when it fails: a precision this CPU cannot compute is refused there). */
static kiln_status run_train(run* r) {
  kiln_trainer* trainer = NULL;
  kiln_status status = kiln_trainer_create(r->rt, &r->o, &trainer);
  if (status != KILN_OK) return status;
  status = kiln_trainer_run(trainer);
  kiln_trainer_release(trainer);
  return status;
}

/* True when the two runs' parameters and optimizer states (AdamW's step
 * counters and moments) are the same, bit for bit. */
static int same_state(const run* a, const run* b) {
  double pa[LINEAR_PARAMS], pb[LINEAR_PARAMS];
  size_t n = 0, m = 0, i;
  int same;
  read_linear(a->model, pa);
  read_linear(b->model, pb);
  same = memcmp(pa, pb, sizeof pa) == 0;
  REQUIRE_OK(kiln_optimizer_state_count(a->opt, &n));
  REQUIRE_OK(kiln_optimizer_state_count(b->opt, &m));
  if (n != m || n == 0) return 0;
  for (i = 0; i < n; ++i) {
    kiln_tensor *ta = NULL, *tb = NULL;
    const char *na = NULL, *nb = NULL;
    unsigned char ba[256], bb[256];
    memset(ba, 0, sizeof ba);
    memset(bb, 0, sizeof bb);
    REQUIRE_OK(kiln_optimizer_state_get(a->opt, i, &na, &ta));
    REQUIRE_OK(kiln_optimizer_state_get(b->opt, i, &nb, &tb));
    REQUIRE_OK(kiln_tensor_read(ta, ba, sizeof ba));
    REQUIRE_OK(kiln_tensor_read(tb, bb, sizeof bb));
    same &= strcmp(na, nb) == 0 && memcmp(ba, bb, sizeof ba) == 0;
    kiln_tensor_release(ta);
    kiln_tensor_release(tb);
  }
  return same;
}

static void bad_settings_are_refused(void) {
  run r;
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o;
  run_open(&r, 1, 2, -1, 0, 0);
  o = r.o;
  o.loss_scaling = 3;
  CHECK_ERROR(kiln_trainer_create(r.rt, &o, &trainer), KILN_ERR_INVALID_ARGUMENT, "options->loss_scaling is 3",
              "2 (off)");
  o = r.o;
  o.loss_scale_init = -1;
  CHECK_ERROR(kiln_trainer_create(r.rt, &o, &trainer), KILN_ERR_INVALID_ARGUMENT, "options->loss_scale_init is -1",
              "finite scale > 0");
  o = r.o;
  o.loss_scale_growth = 0.5;
  CHECK_ERROR(kiln_trainer_create(r.rt, &o, &trainer), KILN_ERR_INVALID_ARGUMENT,
              "options->loss_scale_growth is 0.5", "> 1");
  o = r.o;
  o.loss_scale_backoff = 1;
  CHECK_ERROR(kiln_trainer_create(r.rt, &o, &trainer), KILN_ERR_INVALID_ARGUMENT,
              "options->loss_scale_backoff is 1", "between 0 and 1");
  o = r.o;
  o.loss_scale_interval = -5;
  CHECK_ERROR(kiln_trainer_create(r.rt, &o, &trainer), KILN_ERR_INVALID_ARGUMENT,
              "options->loss_scale_interval is -5", "> 0");
  o = r.o;
  o.loss_scale_min = 2048;
  CHECK_ERROR(kiln_trainer_create(r.rt, &o, &trainer), KILN_ERR_INVALID_ARGUMENT,
              "options->loss_scale_min is 2048", "<= the initial scale 1024");
  CHECK(trainer == NULL);
  run_close(&r);
}

/* The scale of the first step under `precision` and `loss_scaling`, with
 * the other settings left at their defaults (1 means no scaling). */
static double first_scale(const char* precision, int loss_scaling, size_t options_size) {
  run r;
  double scale;
  kiln_status status;
  run_open(&r, 2, 1, -1, 0, 0);
  r.o.precision = precision;
  r.o.loss_scaling = loss_scaling;
  r.o.loss_scale_init = 0;
  r.o.loss_scale_interval = 0;
  r.o.size = options_size;
  status = run_train(&r);
  CHECK(r.n_steps == 1 || status != KILN_OK);
  scale = status == KILN_OK ? r.steps[0].loss_scale : -1;
  if (status == KILN_ERR_UNSUPPORTED) printf("%s skipped: %s\n", precision, kiln_last_error());
  run_close(&r);
  return status == KILN_ERR_UNSUPPORTED ? -1 : scale;
}

static void on_by_default_for_f16_only(void) {
  const double bf16 = first_scale("bf16", 0, sizeof(kiln_trainer_options));
  CHECK(first_scale("f16", 0, sizeof(kiln_trainer_options)) == 65536);
  CHECK(first_scale("f16", 2, sizeof(kiln_trainer_options)) == 1);
  CHECK(first_scale("f32", 0, sizeof(kiln_trainer_options)) == 1);
  CHECK(first_scale("f32", 1, sizeof(kiln_trainer_options)) == 65536);
  CHECK(bf16 == 1 || bf16 == -1);
  /* A caller built before the fields existed gets the default. */
  CHECK(first_scale("f16", 1, offsetof(kiln_trainer_options, loss_scaling)) == 65536);
  CHECK(first_scale("f32", 1, offsetof(kiln_trainer_options, loss_scaling)) == 1);
}

static const char* metrics_path(void) { return KILN_TRAINER_TEST_DIR "/loss_scaling.jsonl"; }

static int line_number;
static int line_three_reports_the_skip;
static void visit_line(void* user, const char* line) {
  (void)user;
  if (++line_number == 3)
    line_three_reports_the_skip = strstr(line, "\"loss_scale\":1024,") && strstr(line, "\"skipped\":1,");
}

/* RELIABILITY promise 8: a NaN gradient at step 3 skips the step, halves the
 * scale and leaves the schedule where it was; afterwards everything equals
 * a run whose data simply lacks that batch. */
static void overflow_skips_the_step(void) {
  run faulty, control;
  int i;
  run_open(&faulty, 3, 6, 2, 0, 0);
  run_open(&control, 3, 6, -1, 2, 1);
  faulty.o.metrics_path = metrics_path();
  CHECK_OK(run_train(&faulty));
  CHECK_OK(run_train(&control));
  CHECK(faulty.n_steps == 6 && control.n_steps == 5);
  for (i = 0; i < faulty.n_steps; ++i) {
    CHECK(faulty.steps[i].skipped == (i == 2));
    CHECK(faulty.steps[i].loss_scale == (i <= 2 ? 1024 : 512));
  }
  /* The skipped step ran with the rate of the step before it, and the step
   * after it with the rate the control's step 3 had: the schedule stood. */
  CHECK(faulty.steps[2].lr == faulty.steps[1].lr);
  CHECK(faulty.steps[2].grad_norm == 0);
  for (i = 3; i < 6; ++i) {
    CHECK(faulty.steps[i].lr == control.steps[i - 1].lr);
    CHECK(faulty.steps[i].loss == control.steps[i - 1].loss);
  }
  CHECK(same_state(&faulty, &control));
  line_number = 0;
  CHECK(count_lines(metrics_path(), visit_line, NULL) == 6);
  CHECK(line_three_reports_the_skip);
  run_close(&control);
  run_close(&faulty);
}

/* With accumulation the check is made once per optimizer step: a NaN in
 * the second micro-batch of step 2 skips that step and halves the scale
 * once; the control's data lacks both of that step's micro-batches. */
static void accumulated_steps_are_checked_once(void) {
  run faulty, control;
  run_open(&faulty, 4, 6, 3, 0, 0);
  run_open(&control, 4, 6, -1, 2, 2);
  faulty.o.accumulate = 2;
  control.o.accumulate = 2;
  CHECK_OK(run_train(&faulty));
  CHECK_OK(run_train(&control));
  CHECK(faulty.n_steps == 3 && control.n_steps == 2);
  CHECK(faulty.steps[1].skipped == 1 && faulty.steps[2].skipped == 0);
  CHECK(faulty.steps[2].loss_scale == 512);
  CHECK(same_state(&faulty, &control));
  run_close(&control);
  run_close(&faulty);
}

/* RELIABILITY promise 9: NaN in every batch backs the scale off (by 0.25
 * here) down to the minimum, and the step that overflows there ends
 * training with an error naming the step and the scale. */
static void persistent_nan_stops_at_the_minimum(void) {
  run r;
  double before[LINEAR_PARAMS], after[LINEAR_PARAMS];
  run_open(&r, 5, 5, -1, 0, 0);
  kiln_loader_release(r.train);
  blobs_poison(r.rt, &r.data, 0, r.data.n);
  r.train = make_loader(&r.data, B, 0);
  r.o.train = r.train;
  r.o.loss_scale_init = 16;
  r.o.loss_scale_backoff = 0.25;
  r.o.loss_scale_min = 1;
  read_linear(r.model, before);
  CHECK_ERROR(run_train(&r), KILN_ERR_INVALID_STATE, "step 3", "minimum loss scale 1", "loss_scale_min");
  read_linear(r.model, after);
  CHECK(memcmp(before, after, sizeof before) == 0);
  CHECK(r.n_steps == 2);
  CHECK(r.steps[0].skipped && r.steps[0].loss_scale == 16);
  CHECK(r.steps[1].skipped && r.steps[1].loss_scale == 4);
  run_close(&r);
}

/* After `interval` clean steps in a row the scale grows by `growth`. */
static void the_scale_grows_after_its_interval(void) {
  const double want[8] = {8, 8, 8, 24, 24, 24, 72, 72};
  run r;
  int i;
  run_open(&r, 6, 8, -1, 0, 0);
  r.o.loss_scale_init = 8;
  r.o.loss_scale_growth = 3;
  r.o.loss_scale_interval = 3;
  CHECK_OK(run_train(&r));
  CHECK(r.n_steps == 8);
  for (i = 0; i < r.n_steps; ++i) CHECK(r.steps[i].loss_scale == want[i] && r.steps[i].skipped == 0);
  run_close(&r);
}

/* Gradients are unscaled before they are clipped: with a clip small enough
 * to act on every step, a scaled run reports the same norms and reaches the
 * same parameters as an unscaled one (scales are powers of two, so the
 * division is exact). */
static void clipping_sees_unscaled_gradients(void) {
  run scaled, plain;
  int i;
  run_open(&scaled, 7, 4, -1, 0, 0);
  run_open(&plain, 7, 4, -1, 0, 0);
  scaled.o.loss_scale_init = 65536;
  scaled.o.clip_grad_norm = 1e-3;
  plain.o.loss_scaling = 2;
  plain.o.clip_grad_norm = 1e-3;
  CHECK_OK(run_train(&scaled));
  CHECK_OK(run_train(&plain));
  CHECK(scaled.n_steps == 4 && plain.n_steps == 4);
  for (i = 0; i < 4; ++i) {
    CHECK(scaled.steps[i].grad_norm == plain.steps[i].grad_norm);
    CHECK(scaled.steps[i].grad_norm > 1e-3);
    CHECK(plain.steps[i].loss_scale == 1);
  }
  CHECK(same_state(&scaled, &plain));
  run_close(&plain);
  run_close(&scaled);
}

/* RELIABILITY promise 5 for the scale: 10 steps straight (a skip at step 3,
 * growth every 2 clean steps) equal 4 steps, a save (one clean step
 * counted towards growth), a fresh runtime that loads it, and 6 more: the
 * same scales, losses, parameters and state. */
static void resuming_keeps_the_scale(void) {
  const char* path = KILN_TRAINER_TEST_DIR "/loss_scaling.safetensors";
  run straight, first, second;
  kiln_trainer* trainer = NULL;
  int i, done = 0;
  run_open(&straight, 8, 10, 2, 0, 0);
  straight.o.loss_scale_interval = 2;
  CHECK_OK(run_train(&straight));
  CHECK(straight.n_steps == 10);

  run_open(&first, 8, 10, 2, 0, 0);
  first.o.loss_scale_interval = 2;
  first.o.max_steps = 4;
  REQUIRE_OK(kiln_trainer_create(first.rt, &first.o, &trainer));
  CHECK_OK(kiln_trainer_run(trainer));
  CHECK_OK(kiln_trainer_save(trainer, path));
  kiln_trainer_release(trainer);

  run_open(&second, 99, 10, 2, 0, 0);
  second.o.loss_scale_interval = 2;
  REQUIRE_OK(kiln_trainer_create(second.rt, &second.o, &trainer));
  CHECK_OK(kiln_trainer_load(trainer, path));
  while (kiln_trainer_step(trainer, NULL, &done) == KILN_OK && !done) {
  }
  kiln_trainer_release(trainer);
  CHECK(first.n_steps == 4 && second.n_steps == 6);
  for (i = 0; i < 6 && second.n_steps == 6; ++i) {
    const kiln_step_metrics *a = &straight.steps[4 + i], *b = &second.steps[i];
    CHECK(a->step == b->step && a->loss_scale == b->loss_scale && a->loss == b->loss && a->lr == b->lr);
  }
  /* The scale did move: a skip, then growth both before and after the save. */
  CHECK(straight.steps[2].skipped && straight.steps[2].loss_scale == 2048);
  CHECK(straight.steps[3].loss_scale == 1024 && straight.steps[5].loss_scale == 2048);
  CHECK(straight.steps[9].loss_scale == 8192);
  CHECK(same_state(&straight, &second));
  unlink(path);
  run_close(&second);
  run_close(&first);
  run_close(&straight);
}

int main(void) {
  bad_settings_are_refused();
  on_by_default_for_f16_only();
  overflow_skips_the_step();
  accumulated_steps_are_checked_once();
  persistent_nan_stops_at_the_minimum();
  the_scale_grows_after_its_interval();
  clipping_sees_unscaled_gradients();
  resuming_keeps_the_scale();
  return check_report("trainer/loss_scaling");
}
