/* A C host that embeds kiln: it owns the training loop and steps the
 * trainer itself, with its own stopping rule, receiving metrics through
 * on_step; it saves the training state, rebuilds everything as a restarted
 * process would and resumes from the file; it saves and reloads the
 * model's weights; and it runs a Lua training snippet held in a C string.
 *
 *   kiln_embed_c [folder for the files it writes, default "."]
 *
 * Errors are handled the C way: every call goes through TRY, which jumps to
 * the function's cleanup on failure (releasing NULL does nothing, so cleanup
 * releases everything). The host's own checks report through kiln's error
 * channel too (kiln_error_set), so main has one place that prints why. */
#include <stdio.h>
#include <string.h>

#include "kiln/kiln.h"
#include "kiln/kiln_script.h"
#include "lua_training.h"

#define TRY(call)                     \
  do {                                \
    status = (call);                  \
    if (status != KILN_OK) goto done; \
  } while (0)

#define EXPECT(cond, message)                                     \
  do {                                                            \
    if (!(cond)) {                                                \
      status = kiln_error_set(KILN_ERR_INVALID_STATE, (message)); \
      goto done;                                                  \
    }                                                             \
  } while (0)

enum { kPoints = 256, kHidden = 32, kBatch = 32, kWindow = 8, kMaxSteps = 2000, kResumedSteps = 3 };

/* ---- data: points of [-1, 1]^2, class 1 inside the circle of radius 0.6 ---- */

static float uniform(unsigned* state) {
  *state = *state * 1664525u + 1013904223u;
  return 2.0f * (float)(*state >> 8) / 16777216.0f - 1.0f;
}

/* A "tensors" source fed from the host's memory; it copies the tensors, so
 * they go right after. */
static kiln_status make_source(kiln_runtime* rt, kiln_data_source** out) {
  float points[kPoints][2];
  int64_t labels[kPoints];
  const int64_t points_shape[2] = {kPoints, 2}, labels_shape[1] = {kPoints};
  kiln_tensor *x = NULL, *y = NULL;
  kiln_attr config[2];
  unsigned state = 11u;
  kiln_status status;
  int i;
  for (i = 0; i < kPoints; ++i) {
    points[i][0] = uniform(&state);
    points[i][1] = uniform(&state);
    labels[i] = points[i][0] * points[i][0] + points[i][1] * points[i][1] < 0.36f;
  }
  TRY(kiln_tensor_from_data(rt, points, sizeof points, points_shape, 2, KILN_F32, &x));
  TRY(kiln_tensor_from_data(rt, labels, sizeof labels, labels_shape, 1, KILN_I64, &y));
  config[0] = kiln_attr_tensor("input", x);
  config[1] = kiln_attr_tensor("target", y);
  TRY(kiln_data_source_create(rt, "tensors", config, 2, out));
done:
  kiln_tensor_release(x);
  kiln_tensor_release(y);
  return status;
}

static kiln_status make_loader(kiln_data_source* source, int64_t batch_size, int shuffle, kiln_loader** out) {
  kiln_loader_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.batch_size = batch_size;
  o.shuffle = shuffle;
  o.seed = 7;
  o.device = KILN_DEVICE_CPU;
  return kiln_loader_create(source, NULL, 0, &o, out);
}

/* ---- the model: Linear(2, 32), ReLU, Linear(32, 2) in a Sequential ---- */

static kiln_status append_layer(kiln_module* sequential, kiln_runtime* rt, const char* type, const kiln_attr* config,
                                size_t n_config) {
  kiln_module* layer = NULL;
  kiln_status status;
  TRY(kiln_module_create(rt, type, config, n_config, &layer));
  TRY(kiln_sequential_append(sequential, NULL, layer)); /* the container takes its own reference */
done:
  kiln_module_release(layer);
  return status;
}

static kiln_status make_model(kiln_runtime* rt, kiln_module** out) {
  const kiln_attr first[2] = {kiln_attr_int("in_features", 2), kiln_attr_int("out_features", kHidden)};
  const kiln_attr last[2] = {kiln_attr_int("in_features", kHidden), kiln_attr_int("out_features", 2)};
  kiln_module* model = NULL;
  kiln_status status;
  TRY(kiln_sequential_create(rt, &model));
  TRY(append_layer(model, rt, "Linear", first, 2));
  TRY(append_layer(model, rt, "ReLU", NULL, 0));
  TRY(append_layer(model, rt, "Linear", last, 2));
  *out = model;
  model = NULL;
done:
  kiln_module_release(model);
  return status;
}

/* ---- training: what a host builds, and builds the same way after a restart ---- */

/* What the host learns through on_step. */
typedef struct progress {
  int64_t steps;
  double first_loss;
  double recent[kWindow]; /* the last kWindow losses, as a ring */
} progress;

static int on_step(void* user_data, const kiln_step_metrics* m) {
  progress* p = (progress*)user_data;
  if (p->steps == 0) p->first_loss = m->loss;
  p->recent[p->steps % kWindow] = m->loss;
  p->steps++;
  if (m->step % 50 == 0)
    printf("  step %4lld  epoch %3lld  loss %.4f\n", (long long)m->step, (long long)m->epoch, m->loss);
  return 0; /* nonzero would stop training after this step */
}

static double recent_mean(const progress* p) {
  double sum = 0.0;
  int i;
  for (i = 0; i < kWindow; ++i) sum += p->recent[i];
  return sum / kWindow;
}

typedef struct training {
  kiln_module* model;
  kiln_optimizer* optimizer;
  kiln_loader* train;
  kiln_trainer* trainer;
} training;

static void training_close(training* t) {
  kiln_trainer_release(t->trainer);
  kiln_loader_release(t->train);
  kiln_optimizer_release(t->optimizer);
  kiln_module_release(t->model);
  memset(t, 0, sizeof *t);
}

/* A fresh model, Adam over its parameters, a shuffled loader and a quiet
 * trainer whose on_step feeds `p`. */
static kiln_status training_open(kiln_runtime* rt, kiln_data_source* source, progress* p, training* t) {
  kiln_tensor* params[4] = {NULL, NULL, NULL, NULL};
  const kiln_attr hyper[1] = {kiln_attr_float("lr", 0.01)};
  kiln_trainer_options o;
  size_t n_params = 0, i;
  const char* name = NULL;
  kiln_status status;
  memset(t, 0, sizeof *t);
  TRY(make_model(rt, &t->model));
  TRY(kiln_module_parameter_count(t->model, &n_params));
  EXPECT(n_params == 4, "the model should have 4 parameters: two weights and two biases");
  for (i = 0; i < n_params; ++i) TRY(kiln_module_parameter(t->model, i, &name, &params[i]));
  TRY(kiln_optimizer_create(rt, "Adam", params, n_params, hyper, 1, &t->optimizer));
  TRY(make_loader(source, kBatch, 1, &t->train));
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.model = t->model;
  o.optimizer = t->optimizer;
  o.train = t->train;
  o.epochs = kMaxSteps; /* an upper bound: the host's loop decides when to stop */
  o.progress = 3;       /* quiet: the host prints what it wants */
  o.on_step = on_step;
  o.user_data = p;
  TRY(kiln_trainer_create(rt, &o, &t->trainer));
done:
  for (i = 0; i < 4; ++i) kiln_tensor_release(params[i]); /* the optimizer holds its own references */
  if (status != KILN_OK) training_close(t);
  return status;
}

/* The host's loop: one step at a time until the mean of the last kWindow
 * losses is under 0.1, at most kMaxSteps steps. */
static kiln_status train_until_fitted(training* t, const progress* p) {
  kiln_step_metrics m;
  int done = 0;
  kiln_status status = KILN_OK;
  memset(&m, 0, sizeof m);
  m.size = sizeof m;
  while (p->steps < kMaxSteps && !(p->steps >= kWindow && recent_mean(p) < 0.1)) {
    TRY(kiln_trainer_step(t->trainer, &m, &done));
    EXPECT(!done, "the trainer stopped before the host's rule did");
  }
  printf("stopped after %lld steps: loss %.4f -> %.4f (mean of the last %d)\n", (long long)p->steps, p->first_loss,
         recent_mean(p), kWindow);
  EXPECT(recent_mean(p) < 0.25 * p->first_loss, "the loss did not fall to a quarter of the first step's");
done:
  return status;
}

/* ---- checkpoints: save, restart, resume where it stood ---- */

/* Saves the training state, takes kResumedSteps more steps, then rebuilds
 * model, optimizer, loader and trainer from scratch, loads the state and
 * checks that they take the same steps with the same losses. */
static kiln_status check_resume(kiln_runtime* rt, kiln_data_source* source, training* t, const char* path) {
  kiln_step_metrics expected[kResumedSteps], m;
  progress resumed_progress;
  training resumed;
  int done = 0, i;
  kiln_status status;
  memset(&resumed, 0, sizeof resumed);
  memset(&resumed_progress, 0, sizeof resumed_progress);
  memset(&m, 0, sizeof m);
  m.size = sizeof m;
  TRY(kiln_trainer_save(t->trainer, path));
  for (i = 0; i < kResumedSteps; ++i) {
    memset(&expected[i], 0, sizeof expected[i]);
    expected[i].size = sizeof expected[i];
    TRY(kiln_trainer_step(t->trainer, &expected[i], &done));
  }
  TRY(training_open(rt, source, &resumed_progress, &resumed));
  TRY(kiln_trainer_load(resumed.trainer, path));
  for (i = 0; i < kResumedSteps; ++i) {
    TRY(kiln_trainer_step(resumed.trainer, &m, &done));
    EXPECT(m.step == expected[i].step, "the resumed trainer is not at the step it was saved at");
    EXPECT(m.epoch == expected[i].epoch && m.epoch_step == expected[i].epoch_step,
           "the resumed trainer is not at the batch it was saved at");
    EXPECT(m.loss == expected[i].loss, "the resumed trainer's loss differs from the uninterrupted one's");
  }
  printf("resumed from %s at step %lld: %d steps with the same losses\n", path, (long long)expected[0].step - 1,
         kResumedSteps);
done:
  training_close(&resumed);
  return status;
}

/* Saves the model's weights, loads them into a fresh model and checks that
 * both measure the same loss over the whole data set. */
static kiln_status check_weights(kiln_runtime* rt, kiln_data_source* source, kiln_module* model, const char* path) {
  kiln_module* fresh = NULL;
  kiln_loader* all = NULL;
  kiln_eval_metrics trained, loaded;
  kiln_status status;
  memset(&trained, 0, sizeof trained);
  memset(&loaded, 0, sizeof loaded);
  trained.size = loaded.size = sizeof trained;
  TRY(kiln_weights_save(model, path));
  TRY(make_model(rt, &fresh));
  TRY(kiln_weights_load(fresh, path, 1)); /* strict: exactly the model's names */
  TRY(make_loader(source, kPoints, 0, &all));
  TRY(kiln_evaluate(model, all, NULL, NULL, NULL, &trained));
  TRY(kiln_evaluate(fresh, all, NULL, NULL, NULL, &loaded));
  EXPECT(trained.loss == loaded.loss, "the model loaded from the weights file measures another loss");
  EXPECT(trained.accuracy > 0.9, "the trained model classifies fewer than 90% of the points");
  printf("weights in %s: loss %.4f, accuracy %.3f, the same after loading\n", path, loaded.loss, loaded.accuracy);
done:
  kiln_loader_release(all);
  kiln_module_release(fresh);
  return status;
}

/* ---- Lua: a training snippet from a C string, sandboxed ---- */

static kiln_status run_lua(kiln_runtime* rt) {
  kiln_script_options o;
  kiln_script* script = NULL;
  kiln_status status;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.sandbox = 1; /* an untrusted script: no files, no os, limits below */
  o.instruction_limit = 100000000;
  o.memory_limit = 64u << 20;
  TRY(kiln_script_create(rt, &o, &script));
  TRY(kiln_script_run_string(script, kLuaTraining, "=training snippet"));
done:
  kiln_script_release(script);
  return status;
}

int main(int argc, char** argv) {
  const char* folder = argc > 1 ? argv[1] : ".";
  char state_path[1024], weights_path[1024];
  kiln_runtime_options options;
  kiln_runtime* rt = NULL;
  kiln_data_source* source = NULL;
  progress p;
  training t;
  kiln_status status;
  memset(&options, 0, sizeof options);
  options.size = sizeof options;
  options.seed = 42; /* plugins come from the default search path */
  memset(&p, 0, sizeof p);
  memset(&t, 0, sizeof t);
  snprintf(state_path, sizeof state_path, "%s/embed_c_state.safetensors", folder);
  snprintf(weights_path, sizeof weights_path, "%s/embed_c_weights.safetensors", folder);

  TRY(kiln_runtime_create(&options, &rt));
  TRY(make_source(rt, &source));
  TRY(training_open(rt, source, &p, &t));
  TRY(train_until_fitted(&t, &p));
  TRY(check_resume(rt, source, &t, state_path));
  TRY(check_weights(rt, source, t.model, weights_path));
  TRY(run_lua(rt));
done:
  training_close(&t);
  kiln_data_source_release(source);
  kiln_runtime_release(rt);
  if (status != KILN_OK) {
    fprintf(stderr, "embed: %s: %s\n", kiln_status_name(status), kiln_last_error());
    return 1;
  }
  printf("embed: all done\n");
  return 0;
}
