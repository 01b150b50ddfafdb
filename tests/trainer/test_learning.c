/* A Linear model trained with SGD on two Gaussian blobs: the loss falls,
 * the validation accuracy reaches 0.95, and kiln_trainer_evaluate's loss
 * and accuracy equal those computed here from the model's own outputs. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "trainer_support.h"

#define EPOCHS 3
#define TRAIN_N 256
#define BATCH 16
#define STEPS_PER_EPOCH (TRAIN_N / BATCH)

typedef struct record {
  double losses[EPOCHS * STEPS_PER_EPOCH];
  int64_t steps;
  int evals;
  int epochs_ended;
  kiln_eval_metrics last_eval;
} record;

static int on_step(void* user, const kiln_step_metrics* m) {
  record* r = (record*)user;
  if (r->steps < EPOCHS * STEPS_PER_EPOCH) r->losses[r->steps] = m->loss;
  r->steps++;
  return 0;
}

static int on_eval(void* user, const kiln_eval_metrics* m) {
  record* r = (record*)user;
  r->evals++;
  r->last_eval = *m;
  return 0;
}

static int on_epoch(void* user, int64_t epoch, const kiln_step_metrics* last) {
  record* r = (record*)user;
  CHECK(epoch == r->epochs_ended);
  CHECK(last->epoch == epoch && last->epoch_step == STEPS_PER_EPOCH);
  r->epochs_ended++;
  return 0;
}

static double mean(const double* v, int n) {
  double s = 0;
  int i;
  for (i = 0; i < n; ++i) s += v[i];
  return s / n;
}

/* The accuracy and mean cross-entropy of the model on `b`, from its outputs. */
static void score_by_hand(kiln_module* model, const blobs* b, double* accuracy, double* loss) {
  kiln_tensor* out = NULL;
  float* z = (float*)malloc((size_t)b->n * 2 * sizeof(float));
  int64_t i, correct = 0;
  double total = 0;
  CHECK_OK(kiln_module_set_training(model, 0));
  CHECK_OK(kiln_module_forward1(model, &b->inputs, 1, &out));
  CHECK_OK(kiln_module_set_training(model, 1));
  CHECK_OK(kiln_tensor_read(out, z, (size_t)b->n * 2 * sizeof(float)));
  for (i = 0; i < b->n; ++i) {
    const double z0 = z[2 * i], z1 = z[2 * i + 1], top = z0 > z1 ? z0 : z1;
    const int64_t predicted = z1 > z0 ? 1 : 0;
    correct += predicted == b->y[i];
    total += top + log(exp(z0 - top) + exp(z1 - top)) - (b->y[i] ? z1 : z0);
  }
  *accuracy = (double)correct / (double)b->n;
  *loss = total / (double)b->n;
  kiln_tensor_release(out);
  free(z);
}

/* Float targets (one-hot rows, with mse_loss) are no class indices: the
 * evaluation gives a loss and an accuracy of -1. */
static void regression_has_no_accuracy(kiln_runtime* rt, const blobs* b, kiln_module* model, kiln_optimizer* opt) {
  const int64_t shape[2] = {b->n, 2};
  float* one_hot = (float*)calloc((size_t)b->n * 2, sizeof(float));
  kiln_tensor* targets = NULL;
  kiln_data_source* source = NULL;
  kiln_loader *loader = NULL, *train = NULL;
  kiln_loader_options lo;
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o;
  kiln_eval_metrics m;
  int64_t i;
  for (i = 0; i < b->n; ++i) one_hot[2 * i + b->y[i]] = 1.0f;
  CHECK_OK(kiln_tensor_from_data(rt, one_hot, (size_t)b->n * 2 * sizeof(float), shape, 2, KILN_F32, &targets));
  {
    const kiln_attr config[2] = {kiln_attr_tensor("input", b->inputs), kiln_attr_tensor("target", targets)};
    CHECK_OK(kiln_data_source_create(rt, "tensors", config, 2, &source));
  }
  memset(&lo, 0, sizeof lo);
  lo.size = sizeof lo;
  lo.batch_size = 50;
  CHECK_OK(kiln_loader_create(source, NULL, 0, &lo, &loader));
  CHECK_OK(kiln_loader_create(source, NULL, 0, &lo, &train));
  o = trainer_options(model, opt, train);
  o.loss = "mse_loss";
  memset(&m, 0, sizeof m);
  m.size = sizeof m;
  CHECK_OK(kiln_trainer_create(rt, &o, &trainer));
  CHECK_OK(kiln_trainer_evaluate(trainer, loader, &m));
  CHECK(m.accuracy == -1.0 && m.samples == b->n && m.loss > 0);
  kiln_trainer_release(trainer);
  kiln_loader_release(loader);
  kiln_loader_release(train);
  kiln_data_source_release(source);
  kiln_tensor_release(targets);
  free(one_hot);
}

int main(void) {
  kiln_runtime* rt = open_runtime(1);
  blobs train, valid;
  kiln_loader *train_loader, *valid_loader;
  kiln_module* model;
  kiln_optimizer* opt;
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o;
  kiln_eval_metrics m;
  record r;
  double accuracy = 0, loss = 0;

  memset(&r, 0, sizeof r);
  blobs_make(rt, TRAIN_N, 11, &train);
  blobs_make(rt, 200, 12, &valid);
  train_loader = make_loader(&train, BATCH, 1);
  valid_loader = make_loader(&valid, 64, 0);
  model = make_linear(rt);
  opt = make_sgd(rt, model, 0.1);
  o = trainer_options(model, opt, train_loader);
  o.validation = valid_loader;
  o.epochs = EPOCHS;
  o.on_step = on_step;
  o.on_eval = on_eval;
  o.on_epoch = on_epoch;
  o.user_data = &r;
  CHECK_OK(kiln_trainer_create(rt, &o, &trainer));
  CHECK_OK(kiln_trainer_run(trainer));
  CHECK(r.steps == EPOCHS * STEPS_PER_EPOCH);
  CHECK(r.epochs_ended == EPOCHS);
  /* eval_every 0: one evaluation after each epoch. */
  CHECK(r.evals == EPOCHS);
  CHECK(r.last_eval.samples == 200 && r.last_eval.epoch == EPOCHS - 1 && r.last_eval.step == r.steps);
  /* The blobs' centres are 4*sqrt(2) apart with unit variance: the best
   * linear rule errs with probability P(Z > 2*sqrt(2)) ~ 0.2%, so 0.95 is
   * far inside what three epochs of SGD reach, and far above chance. */
  CHECK(r.last_eval.accuracy >= 0.95);
  CHECK(mean(r.losses + (EPOCHS - 1) * STEPS_PER_EPOCH, STEPS_PER_EPOCH) < 0.5 * mean(r.losses, 4));

  memset(&m, 0, sizeof m);
  m.size = sizeof m;
  CHECK_OK(kiln_trainer_evaluate(trainer, NULL, &m));
  score_by_hand(model, &valid, &accuracy, &loss);
  CHECK(m.samples == 200);
  CHECK(m.accuracy == accuracy);
  CHECK(fabs(m.loss - loss) <= 1e-5 + 1e-3 * fabs(loss));
  CHECK(m.loss == r.last_eval.loss);
  regression_has_no_accuracy(rt, &valid, model, opt);

  kiln_trainer_release(trainer);
  kiln_optimizer_release(opt);
  kiln_module_release(model);
  kiln_loader_release(train_loader);
  kiln_loader_release(valid_loader);
  blobs_free(&train);
  blobs_free(&valid);
  kiln_runtime_release(rt);
  return check_report("trainer/learning");
}
