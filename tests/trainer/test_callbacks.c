/* Callbacks: a nonzero return stops training after the step and the
 * trainer returns KILN_OK; a callback that records an error with
 * kiln_error_set reports a failure, returned with its status and message;
 * one that records an error but returns no status gives
 * KILN_ERR_INVALID_STATE. on_eval and on_epoch stop training too. */
#include "check.h"
#include "trainer_support.h"

#define N 40
#define B 4 /* 10 steps per epoch */

typedef struct plan {
  int64_t stop_at_step;    /* on_step returns 1 there */
  int64_t fail_at_step;    /* on_step returns kiln_error_set(KILN_ERR_IO, ...) there */
  int64_t garble_at_step;  /* on_step records an error and returns -1 there */
  int stop_on_eval;
  int stop_on_epoch;
  int64_t steps_seen;
  int evals_seen;
  int epochs_seen;
} plan;

static int on_step(void* user, const kiln_step_metrics* m) {
  plan* p = (plan*)user;
  p->steps_seen = m->step;
  if (m->step == p->fail_at_step) return kiln_error_set(KILN_ERR_IO, "cannot write the checkpoint");
  if (m->step == p->garble_at_step) {
    kiln_error_set(KILN_ERR_IO, "something broke");
    return -1;
  }
  return m->step == p->stop_at_step;
}

static int on_eval(void* user, const kiln_eval_metrics* m) {
  plan* p = (plan*)user;
  (void)m;
  p->evals_seen++;
  return p->stop_on_eval;
}

static int on_epoch(void* user, int64_t epoch, const kiln_step_metrics* last) {
  plan* p = (plan*)user;
  (void)epoch;
  (void)last;
  p->epochs_seen++;
  return p->stop_on_epoch;
}

typedef struct setup {
  kiln_runtime* rt;
  blobs data;
  kiln_loader* train;
  kiln_loader* valid;
} setup;

/* Runs 3 epochs (evaluating every 4 steps) under `p`; gives run's status. */
static kiln_status run_with(setup* s, plan* p) {
  kiln_module* model = make_linear(s->rt);
  kiln_optimizer* opt = make_sgd(s->rt, model, 0.1);
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o = trainer_options(model, opt, s->train);
  kiln_status status;
  o.epochs = 3;
  o.validation = s->valid;
  o.eval_every = 4;
  o.on_step = on_step;
  o.on_eval = on_eval;
  o.on_epoch = on_epoch;
  o.user_data = p;
  CHECK_OK(kiln_trainer_create(s->rt, &o, &trainer));
  status = kiln_trainer_run(trainer);
  if (status == KILN_OK) {
    /* Once stopped, a step does nothing. */
    int done = 0;
    CHECK_OK(kiln_trainer_step(trainer, NULL, &done));
    CHECK(done == 1);
  }
  kiln_trainer_release(trainer);
  kiln_optimizer_release(opt);
  kiln_module_release(model);
  return status;
}

int main(void) {
  setup s;
  plan p;
  s.rt = open_runtime(4);
  blobs_make(s.rt, N, 5, &s.data);
  s.train = make_loader(&s.data, B, 1);
  s.valid = make_loader(&s.data, 20, 0);

  memset(&p, 0, sizeof p);
  CHECK_OK(run_with(&s, &p));
  CHECK(p.steps_seen == 30 && p.epochs_seen == 3 && p.evals_seen == 7);

  memset(&p, 0, sizeof p);
  p.stop_at_step = 3;
  /* An error left over from before the run is not the callback's. */
  kiln_error_set(KILN_ERR_NOT_FOUND, "an older failure of the host");
  CHECK_OK(run_with(&s, &p));
  CHECK(p.steps_seen == 3 && p.evals_seen == 0);

  memset(&p, 0, sizeof p);
  p.fail_at_step = 2;
  CHECK_ERROR(run_with(&s, &p), KILN_ERR_IO, "cannot write the checkpoint");
  CHECK(strcmp(kiln_last_error(), "cannot write the checkpoint") == 0);
  CHECK(p.steps_seen == 2);

  memset(&p, 0, sizeof p);
  p.garble_at_step = 5;
  CHECK_ERROR(run_with(&s, &p), KILN_ERR_INVALID_STATE, "stopped by on_step", "returned -1", "something broke");
  CHECK(p.steps_seen == 5);

  memset(&p, 0, sizeof p);
  p.stop_on_eval = 1;
  CHECK_OK(run_with(&s, &p));
  CHECK(p.steps_seen == 4 && p.evals_seen == 1);

  memset(&p, 0, sizeof p);
  p.stop_on_epoch = 1;
  CHECK_OK(run_with(&s, &p));
  CHECK(p.steps_seen == 10 && p.epochs_seen == 1);

  kiln_loader_release(s.train);
  kiln_loader_release(s.valid);
  blobs_free(&s.data);
  kiln_runtime_release(s.rt);
  return check_report("trainer/callbacks");
}
