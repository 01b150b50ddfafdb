/* Bad options and bad batches fail with a message saying what was wrong
 * and what was expected, and give no trainer. */
#include "check.h"
#include "trainer_support.h"

static void expect_create_error(kiln_runtime* rt, const kiln_trainer_options* o, kiln_status want, const char* text1,
                                const char* text2) {
  kiln_trainer* trainer = NULL;
  CHECK_ERROR(kiln_trainer_create(rt, o, &trainer), want, text1, text2);
  CHECK(trainer == NULL);
  kiln_trainer_release(trainer);
}

int main(void) {
  kiln_runtime* rt = open_runtime(3);
  blobs data;
  kiln_loader *train, *other;
  kiln_module* model = make_linear(rt);
  kiln_optimizer* opt = make_sgd(rt, model, 0.1);
  kiln_trainer* trainer = NULL;
  kiln_trainer_options good, o;
  kiln_step_metrics m;
  kiln_eval_metrics e;
  int done = 0;

  blobs_make(rt, 16, 1, &data);
  train = make_loader(&data, 4, 0);
  other = make_loader(&data, 4, 0);
  good = trainer_options(model, opt, train);

  CHECK_ERROR(kiln_trainer_create(rt, NULL, &trainer), KILN_ERR_INVALID_ARGUMENT, "'options' is NULL");
  o = good;
  o.size = 0;
  expect_create_error(rt, &o, KILN_ERR_INVALID_ARGUMENT, "options->size is 0", "sizeof(kiln_trainer_options)");
  o = good;
  o.model = NULL;
  expect_create_error(rt, &o, KILN_ERR_INVALID_ARGUMENT, "options->model is NULL", "needs a model");
  o = good;
  o.optimizer = NULL;
  expect_create_error(rt, &o, KILN_ERR_INVALID_ARGUMENT, "options->optimizer is NULL", "needs an optimizer");
  o = good;
  o.train = NULL;
  expect_create_error(rt, &o, KILN_ERR_INVALID_ARGUMENT, "options->train is NULL", "needs a train loader");
  o = good;
  o.accumulate = -2;
  expect_create_error(rt, &o, KILN_ERR_INVALID_ARGUMENT, "options->accumulate is -2", ">= 1");
  o = good;
  o.epochs = 0;
  expect_create_error(rt, &o, KILN_ERR_INVALID_ARGUMENT, "options->epochs and options->max_steps are both 0",
                      "when training ends");
  o = good;
  o.clip_grad_norm = -1;
  expect_create_error(rt, &o, KILN_ERR_INVALID_ARGUMENT, "options->clip_grad_norm is -1", ">= 0");
  o = good;
  o.progress = 7;
  expect_create_error(rt, &o, KILN_ERR_INVALID_ARGUMENT, "options->progress is 7", "3 (quiet)");
  o = good;
  o.loss = "cross_entrop";
  expect_create_error(rt, &o, KILN_ERR_NOT_FOUND, "options->loss 'cross_entrop'", "cross_entropy");

  /* A batch without the target field names the fields it has. */
  o = good;
  o.target_field = "label";
  CHECK_OK(kiln_trainer_create(rt, &o, &trainer));
  CHECK_ERROR(kiln_trainer_step(trainer, NULL, &done), KILN_ERR_NOT_FOUND, "kiln_trainer_step",
              "the batch has no field 'label' (options->target_field)", "its fields are 'input', 'target'");
  kiln_trainer_release(trainer);
  o = good;
  o.input_field = "image";
  CHECK_OK(kiln_trainer_create(rt, &o, &trainer));
  CHECK_ERROR(kiln_trainer_step(trainer, NULL, &done), KILN_ERR_NOT_FOUND,
              "the batch has no field 'image' (options->input_field)");
  kiln_trainer_release(trainer);

  /* A loss that does not fit the batch says which loss it was. */
  o = good;
  o.loss = "mse_loss";
  CHECK_OK(kiln_trainer_create(rt, &o, &trainer));
  CHECK(kiln_trainer_step(trainer, NULL, &done) != KILN_OK);
  CHECK(strstr(kiln_last_error(), "loss 'mse_loss'") != NULL);
  kiln_trainer_release(trainer);

  CHECK_OK(kiln_trainer_create(rt, &good, &trainer));
  memset(&m, 0, sizeof m);
  CHECK_ERROR(kiln_trainer_step(trainer, &m, &done), KILN_ERR_INVALID_ARGUMENT, "metrics->size is 0",
              "sizeof(kiln_step_metrics)");
  CHECK_ERROR(kiln_trainer_step(trainer, NULL, NULL), KILN_ERR_INVALID_ARGUMENT, "'done' is NULL");
  memset(&e, 0, sizeof e);
  e.size = sizeof e;
  CHECK_ERROR(kiln_trainer_evaluate(trainer, NULL, &e), KILN_ERR_INVALID_ARGUMENT, "no loader given",
              "options->validation");
  CHECK_ERROR(kiln_trainer_evaluate(trainer, train, &e), KILN_ERR_INVALID_ARGUMENT,
              "cannot evaluate on the train loader", "second loader");
  CHECK_OK(kiln_trainer_evaluate(trainer, other, &e));
  CHECK(e.samples == 16);
  kiln_trainer_release(trainer);

  kiln_optimizer_release(opt);
  kiln_module_release(model);
  kiln_loader_release(train);
  kiln_loader_release(other);
  blobs_free(&data);
  kiln_runtime_release(rt);
  return check_report("trainer/errors");
}
