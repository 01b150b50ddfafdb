/* Resuming continues exactly: N steps straight equal N/2 steps, a saved
 * training state, a new process-like start (a fresh runtime with another
 * seed, fresh model, optimizer and loader) that loads it, and N/2 more
 * steps: the same losses and the same parameters and buffers, bit for bit.
 * And every way a resume can go wrong is an error that changes nothing. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "checkpoint_support.h"

#define STEPS 16
#define MODEL_BYTES 4096

static double straight_losses[STEPS];
static unsigned char straight_model[MODEL_BYTES];
static size_t straight_model_size;

static void train_straight(void) {
  training_run r;
  int i;
  run_open(&r, 3, STEPS, NULL, 0);
  for (i = 0; i < STEPS; ++i) straight_losses[i] = run_step(&r);
  straight_model_size = run_model_bytes(&r, straight_model, sizeof straight_model);
  run_close(&r);
}

/* Trains to `stop` with checkpoints every `stop` steps, drops everything,
 * resumes from the checkpoint in a runtime seeded differently, and
 * finishes: every loss and the final model must equal the straight run's. */
static void check_resume_at(int stop) {
  const char* path = scratch_path("resume.safetensors");
  unsigned char model[MODEL_BYTES];
  training_run r;
  int i, same_losses = 1;
  unlink(path);
  run_open(&r, 3, STEPS, path, stop);
  for (i = 0; i < stop; ++i) same_losses &= run_step(&r) == straight_losses[i];
  run_close(&r);

  run_open(&r, 12345, STEPS, NULL, 0);
  CHECK_OK(kiln_trainer_load(r.trainer, path));
  for (i = stop; i < STEPS; ++i) {
    const double loss = run_step(&r);
    if (loss != straight_losses[i]) {
      fprintf(stderr, "resumed at %d: step %d lost %.17g, the straight run %.17g\n", stop, i + 1, loss,
              straight_losses[i]);
      same_losses = 0;
    }
  }
  CHECK(same_losses);
  CHECK(run_model_bytes(&r, model, sizeof model) == straight_model_size);
  CHECK(memcmp(model, straight_model, straight_model_size) == 0);
  {
    int done = 0;
    CHECK_OK(kiln_trainer_step(r.trainer, NULL, &done));
    CHECK(done == 1); /* max_steps counts the steps before the save too */
  }
  run_close(&r);
  printf("resumed after step %d: %d steps bit-identical to the uninterrupted run\n", stop, STEPS - stop);
}

static void test_missing_path_is_an_error(void) {
  training_run r;
  run_open(&r, 3, STEPS, NULL, 0);
  CHECK_ERROR(kiln_trainer_load(r.trainer, scratch_path("never-written.safetensors")), KILN_ERR_IO,
              "never-written.safetensors", "No such file");
  CHECK(run_step(&r) == straight_losses[0]); /* nothing changed: a fresh start is the caller's decision */
  run_close(&r);
}

static void test_weights_file_is_not_a_state(void) {
  const char* path = scratch_path("weights-only.safetensors");
  training_run r;
  run_open(&r, 3, STEPS, NULL, 0);
  CHECK_OK(kiln_weights_save(r.model, path));
  CHECK_ERROR(kiln_trainer_load(r.trainer, path), KILN_ERR_IO, "is not a kiln training state", "kiln_weights_load");
  run_close(&r);
}

/* A state saved from the MLP does not fit a trainer over Linear(2 -> 2):
 * the error lists what differs and the model keeps its weights. */
static void test_other_model_changes_nothing(void) {
  const char* path = scratch_path("mlp-state.safetensors");
  training_run r;
  kiln_runtime* rt;
  kiln_module* linear;
  kiln_optimizer* sgd;
  kiln_loader* loader;
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o;
  blobs b;
  double before[LINEAR_PARAMS], after[LINEAR_PARAMS];

  run_open(&r, 3, STEPS, NULL, 0);
  run_step(&r);
  CHECK_OK(kiln_trainer_save(r.trainer, path));
  run_close(&r);

  rt = open_runtime(1);
  blobs_make(rt, RUN_EXAMPLES, 5, &b);
  loader = make_loader(&b, RUN_BATCH, 0);
  linear = make_linear(rt);
  sgd = make_sgd(rt, linear, 0.1);
  o = trainer_options(linear, sgd, loader);
  REQUIRE_OK(kiln_trainer_create(rt, &o, &trainer));
  read_linear(linear, before);
  CHECK_ERROR(kiln_trainer_load(trainer, path), KILN_ERR_INVALID_ARGUMENT, "does not match the trainer's model",
              "missing from the file: model.weight, model.bias", "unexpected tensor(s) in the file: model.fc1.weight");
  read_linear(linear, after);
  CHECK(memcmp(before, after, sizeof before) == 0);
  kiln_trainer_release(trainer);
  kiln_optimizer_release(sgd);
  kiln_module_release(linear);
  kiln_loader_release(loader);
  blobs_free(&b);
  kiln_runtime_release(rt);
}

static void test_save_errors(void) {
  training_run r;
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o;
  run_open(&r, 3, STEPS, NULL, 0);
  CHECK_ERROR(kiln_trainer_save(r.trainer, scratch_path("no-such-folder/state.safetensors")), KILN_ERR_IO,
              "no-such-folder/state.safetensors");
  /* A directory in the way: the rename fails and the directory stays. */
  mkdir(scratch_path("a-folder"), 0755);
  CHECK_ERROR(kiln_trainer_save(r.trainer, scratch_path("a-folder")), KILN_ERR_IO, "a-folder");
  {
    struct stat st;
    CHECK(stat(scratch_path("a-folder"), &st) == 0 && S_ISDIR(st.st_mode));
  }
  CHECK_ERROR(kiln_trainer_save(NULL, "x"), KILN_ERR_INVALID_ARGUMENT, "trainer");
  CHECK_ERROR(kiln_trainer_load(r.trainer, NULL), KILN_ERR_INVALID_ARGUMENT, "path");

  o = trainer_options(r.model, r.opt, r.loader);
  o.checkpoint_every = 5;
  CHECK_ERROR(kiln_trainer_create(r.rt, &o, &trainer), KILN_ERR_INVALID_ARGUMENT, "checkpoint_path is not set");
  o.checkpoint_every = -1;
  CHECK_ERROR(kiln_trainer_create(r.rt, &o, &trainer), KILN_ERR_INVALID_ARGUMENT, "checkpoint_every is -1");
  run_close(&r);
}

static void test_loader_resume_bounds(void) {
  training_run r;
  run_open(&r, 3, STEPS, NULL, 0);
  CHECK_ERROR(kiln_loader_start_epoch_at(r.loader, 0, 7), KILN_ERR_INVALID_ARGUMENT, "first batch is 7",
              "has 6 batch(es)");
  CHECK_ERROR(kiln_loader_start_epoch_at(r.loader, 0, -1), KILN_ERR_INVALID_ARGUMENT, "first batch is -1");
  CHECK_OK(kiln_loader_start_epoch_at(r.loader, 0, 6));
  {
    kiln_example* batch = NULL;
    CHECK_OK(kiln_loader_next(r.loader, &batch));
    CHECK(batch == NULL); /* starting past the last batch: the epoch is over */
  }
  run_close(&r);
}

static char captured_log[4096];

static void capture_log(void* user, kiln_log_level level, const char* message) {
  (void)user;
  if (level < KILN_LOG_WARNING) return;
  strncat(captured_log, message, sizeof captured_log - strlen(captured_log) - 2);
  strcat(captured_log, "\n");
}

/* The state names the plugins that saved it: one missing here is a warning
 * on the log, and the state still loads. */
static void test_manifest_warns_about_missing_plugins(void) {
  const char* path = scratch_path("manifest.safetensors");
  const char* plugins[3] = {KILN_LAYERS_PLUGIN, KILN_OPTIM_PLUGIN, KILN_DATA_PLUGIN};
  kiln_runtime_options o;
  kiln_runtime* rt = NULL;
  training_run r;
  run_open(&r, 3, STEPS, NULL, 0);
  CHECK_OK(kiln_trainer_save(r.trainer, path));
  run_close(&r);

  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.num_threads = 1;
  o.plugin_paths = plugins;
  o.n_plugin_paths = 3;
  o.skip_default_plugins = 1;
  o.log = capture_log;
  REQUIRE_OK(kiln_runtime_create(&o, &rt));
  run_open_in(&r, rt, STEPS);
  CHECK_OK(kiln_trainer_load(r.trainer, path));
  CHECK(strstr(captured_log, "was saved with plugin 'kiln-parallel'") != NULL);
  CHECK(strstr(captured_log, "which is not loaded") != NULL);
  CHECK(strstr(captured_log, "kiln-layers") == NULL);
  run_close(&r);
}

int main(void) {
  train_straight();
  check_resume_at(8); /* mid-epoch: 6 batches per epoch, so epoch 1 at batch 2 */
  check_resume_at(6); /* at the end of an epoch */
  check_resume_at(1);
  test_missing_path_is_an_error();
  test_weights_file_is_not_a_state();
  test_other_model_changes_nothing();
  test_save_errors();
  test_loader_resume_bounds();
  test_manifest_warns_about_missing_plugins();
  return check_report("checkpoint/resume");
}
