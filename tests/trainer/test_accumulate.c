/* Gradient accumulation: two micro-batches of B per step give the same
 * training as one batch of 2B (SGD without momentum, examples in order),
 * up to float rounding; the step reports the samples of both. */
#include <math.h>

#include "check.h"
#include "trainer_support.h"

#define TRAIN_N 64
#define B 8

/* The parameters after one epoch with batches of `batch` and `accumulate`
 * micro-batches per step; *steps receives the steps taken and *samples
 * the samples of the last step. */
static void train(int64_t batch, int64_t accumulate, double params[LINEAR_PARAMS], int64_t* steps,
                  int64_t* samples) {
  kiln_runtime* rt = open_runtime(9);
  blobs data;
  kiln_loader* loader;
  kiln_module* model;
  kiln_optimizer* opt;
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o;
  kiln_step_metrics m;
  int done = 0;

  blobs_make(rt, TRAIN_N, 4, &data);
  loader = make_loader(&data, batch, 0);
  model = make_linear(rt);
  opt = make_sgd(rt, model, 0.5);
  o = trainer_options(model, opt, loader);
  o.accumulate = accumulate;
  CHECK_OK(kiln_trainer_create(rt, &o, &trainer));
  *steps = 0;
  memset(&m, 0, sizeof m);
  m.size = sizeof m;
  while (kiln_trainer_step(trainer, &m, &done) == KILN_OK && !done) {
    ++*steps;
    *samples = m.samples;
  }
  CHECK(done);
  read_linear(model, params);
  kiln_trainer_release(trainer);
  kiln_optimizer_release(opt);
  kiln_module_release(model);
  kiln_loader_release(loader);
  blobs_free(&data);
  kiln_runtime_release(rt);
}

int main(void) {
  double accumulated[LINEAR_PARAMS], whole[LINEAR_PARAMS], single[LINEAR_PARAMS];
  int64_t steps_accumulated = 0, steps_whole = 0, steps_single = 0, samples = 0;
  int i, differ = 0;

  train(B, 2, accumulated, &steps_accumulated, &samples);
  CHECK(steps_accumulated == TRAIN_N / (2 * B));
  CHECK(samples == 2 * B);
  train(2 * B, 1, whole, &steps_whole, &samples);
  CHECK(steps_whole == TRAIN_N / (2 * B));
  for (i = 0; i < LINEAR_PARAMS; ++i) CHECK(fabs(accumulated[i] - whole[i]) <= 1e-5 + 1e-4 * fabs(whole[i]));
  /* Not a test that passes whatever accumulate does: steps of B alone train differently. */
  train(B, 1, single, &steps_single, &samples);
  CHECK(steps_single == TRAIN_N / B);
  for (i = 0; i < LINEAR_PARAMS; ++i) differ += fabs(single[i] - whole[i]) > 1e-3;
  CHECK(differ > 0);
  return check_report("trainer/accumulate");
}
