/* kiln_trainer_run against kiln_trainer_step: the same seed and options
 * give the same parameters bit for bit, whether a host loops over steps or
 * the trainer runs (evaluating on the way, which must not disturb
 * training). max_steps ends training mid-epoch, with epochs 0 as well. */
#include "check.h"
#include "trainer_support.h"

#define TRAIN_N 100
#define BATCH 8
#define BATCHES_PER_EPOCH 13 /* 12 full batches and one of 4 */

typedef struct setup {
  kiln_runtime* rt;
  blobs data;
  kiln_loader* train;
  kiln_loader* valid;
  kiln_module* model;
  kiln_optimizer* opt;
} setup;

static void setup_open(setup* s) {
  s->rt = open_runtime(5);
  blobs_make(s->rt, TRAIN_N, 3, &s->data);
  s->train = make_loader(&s->data, BATCH, 1);
  s->valid = make_loader(&s->data, 32, 0);
  s->model = make_linear(s->rt);
  s->opt = make_sgd(s->rt, s->model, 0.05);
}

static void setup_close(setup* s) {
  kiln_optimizer_release(s->opt);
  kiln_module_release(s->model);
  kiln_loader_release(s->train);
  kiln_loader_release(s->valid);
  blobs_free(&s->data);
  kiln_runtime_release(s->rt);
}

/* Steps `trainer` until done; gives the number of steps taken. */
static int64_t step_until_done(kiln_trainer* trainer, kiln_step_metrics* last) {
  int64_t steps = 0;
  int done = 0;
  for (;;) {
    kiln_step_metrics m;
    memset(&m, 0, sizeof m);
    m.size = sizeof m;
    {
      const kiln_status status = kiln_trainer_step(trainer, &m, &done);
      CHECK_OK(status);
      if (status != KILN_OK) return -1;
    }
    if (done) return steps;
    ++steps;
    CHECK(m.step == steps);
    *last = m;
  }
}

static void run_equals_steps(void) {
  setup a, b;
  kiln_trainer *run = NULL, *stepped = NULL;
  kiln_trainer_options o;
  kiln_step_metrics last;
  double pa[LINEAR_PARAMS], pb[LINEAR_PARAMS], before[LINEAR_PARAMS];
  int done = 0;

  setup_open(&a);
  setup_open(&b);
  read_linear(a.model, before);
  o = trainer_options(a.model, a.opt, a.train);
  o.epochs = 2;
  o.validation = a.valid;
  o.eval_every = 5;
  CHECK_OK(kiln_trainer_create(a.rt, &o, &run));
  CHECK_OK(kiln_trainer_run(run));
  o = trainer_options(b.model, b.opt, b.train);
  o.epochs = 2;
  CHECK_OK(kiln_trainer_create(b.rt, &o, &stepped));
  CHECK(step_until_done(stepped, &last) == 2 * BATCHES_PER_EPOCH);
  CHECK(last.epoch == 1 && last.epoch_step == BATCHES_PER_EPOCH);
  CHECK(last.samples == TRAIN_N - (BATCHES_PER_EPOCH - 1) * BATCH);
  read_linear(a.model, pa);
  read_linear(b.model, pb);
  CHECK(memcmp(pa, pb, sizeof pa) == 0);
  CHECK(memcmp(pa, before, sizeof pa) != 0);
  /* Done stays done, and does nothing. */
  CHECK_OK(kiln_trainer_step(stepped, NULL, &done));
  CHECK(done == 1);
  read_linear(b.model, pb);
  CHECK(memcmp(pa, pb, sizeof pa) == 0);
  kiln_trainer_release(run);
  kiln_trainer_release(stepped);
  setup_close(&a);
  setup_close(&b);
}

static void max_steps_end_training(void) {
  setup s;
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o;
  kiln_step_metrics last;

  setup_open(&s);
  o = trainer_options(s.model, s.opt, s.train);
  o.epochs = 3;
  o.max_steps = 7;
  CHECK_OK(kiln_trainer_create(s.rt, &o, &trainer));
  CHECK(step_until_done(trainer, &last) == 7);
  CHECK(last.epoch == 0 && last.epoch_step == 7);
  kiln_trainer_release(trainer);

  /* epochs 0: as many epochs as max_steps needs. */
  o.epochs = 0;
  o.max_steps = BATCHES_PER_EPOCH + 2;
  CHECK_OK(kiln_trainer_create(s.rt, &o, &trainer));
  CHECK(step_until_done(trainer, &last) == BATCHES_PER_EPOCH + 2);
  CHECK(last.epoch == 1 && last.epoch_step == 2);
  kiln_trainer_release(trainer);
  setup_close(&s);
}

int main(void) {
  run_equals_steps();
  max_steps_end_training();
  return check_report("trainer/steps");
}
