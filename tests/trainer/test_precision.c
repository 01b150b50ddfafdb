/* kiln_trainer_options.precision: a bad value is refused naming it; a
 * caller built before the field existed (its size stops short of it) gets
 * full precision whatever lies past its struct; "bf16" trains to nearly
 * the f32 parameters, keeps them f32, and opens autocast only around the
 * forward and the loss (callbacks run outside it). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "trainer_support.h"

typedef struct run {
  kiln_runtime* rt;
  blobs data;
  kiln_loader* train;
  kiln_module* model;
  kiln_optimizer* opt;
  int callbacks_outside_autocast;
} run;

static void run_open(run* r) {
  r->rt = open_runtime(11);
  blobs_make(r->rt, 64, 2, &r->data);
  r->train = make_loader(&r->data, 8, 1);
  r->model = make_linear(r->rt);
  r->opt = make_sgd(r->rt, r->model, 0.05);
  r->callbacks_outside_autocast = 1;
}

static void run_close(run* r) {
  kiln_optimizer_release(r->opt);
  kiln_module_release(r->model);
  kiln_loader_release(r->train);
  blobs_free(&r->data);
  kiln_runtime_release(r->rt);
}

static int on_step(void* user, const kiln_step_metrics* m) {
  run* r = (run*)user;
  kiln_dtype d = KILN_I32;
  (void)m;
  if (kiln_autocast_dtype(r->rt, &d) != KILN_OK || d != KILN_F32) r->callbacks_outside_autocast = 0;
  return 0;
}

/* Trains one epoch with `precision`; the status of the run. */
static kiln_status train(run* r, const char* precision, double params[LINEAR_PARAMS]) {
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o = trainer_options(r->model, r->opt, r->train);
  kiln_status status;
  o.precision = precision;
  o.on_step = on_step;
  o.user_data = r;
  status = kiln_trainer_create(r->rt, &o, &trainer);
  if (status != KILN_OK) return status;
  status = kiln_trainer_run(trainer);
  kiln_trainer_release(trainer);
  read_linear(r->model, params);
  return status;
}

static void bad_values_are_refused(void) {
  run r;
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o;
  run_open(&r);
  o = trainer_options(r.model, r.opt, r.train);
  o.precision = "f8";
  CHECK_ERROR(kiln_trainer_create(r.rt, &o, &trainer), KILN_ERR_INVALID_ARGUMENT, "options->precision is 'f8'",
              "\"bf16\"");
  CHECK(trainer == NULL);
  /* A caller whose struct ends before `precision`: what lies past it is not read. */
  o.size = offsetof(kiln_trainer_options, precision);
  CHECK_OK(kiln_trainer_create(r.rt, &o, &trainer));
  CHECK(trainer != NULL);
  kiln_trainer_release(trainer);
  run_close(&r);
}

static void bf16_trains_like_f32(void) {
  run full, low;
  double p32[LINEAR_PARAMS], p16[LINEAR_PARAMS];
  kiln_status status;
  int i;
  run_open(&full);
  run_open(&low);
  CHECK_OK(train(&full, "f32", p32));
  status = train(&low, "bf16", p16);
  if (status == KILN_ERR_UNSUPPORTED) {
    printf("bf16 skipped: %s\n", kiln_last_error());
  } else {
    CHECK_OK(status);
    for (i = 0; i < LINEAR_PARAMS; ++i) CHECK(fabs(p16[i] - p32[i]) <= 0.02 * (1.0 + fabs(p32[i])));
    {
      kiln_tensor* w = NULL;
      const char* name = NULL;
      kiln_dtype d = KILN_I32;
      CHECK_OK(kiln_module_parameter(low.model, 0, &name, &w));
      CHECK_OK(kiln_tensor_dtype(w, &d));
      CHECK(d == KILN_F32);
      kiln_tensor_release(w);
    }
    CHECK(low.callbacks_outside_autocast);
  }
  run_close(&low);
  run_close(&full);
}

int main(void) {
  bad_values_are_refused();
  bf16_trains_like_f32();
  return check_report("trainer/precision");
}
