/* The metrics file and the schedule: one JSON line per step and per
 * evaluation with every key, and the learning rate each step used is the
 * schedule's, for every parameter group from its own base rate. Each step's
 * CPU memory peak covers what is still held after it (the parameters, the
 * optimizer's state); there is no GPU peak on the CPU. A file that cannot
 * be opened fails at creation, naming it. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "trainer_support.h"

#define PATH KILN_TRAINER_TEST_DIR "/metrics-test.jsonl"
#define BASE_LR 0.2
#define BIAS_LR 0.02
#define STEPS 6

typedef struct tally {
  int steps;
  int evals;
  int other;
  double lrs[STEPS];
} tally;

static const char* const step_keys[] = {"\"step\":", "\"epoch\":", "\"loss\":", "\"lr\":", "\"grad_norm\":",
                                        "\"samples\":", "\"step_seconds\":", "\"input_wait_seconds\":",
                                        "\"samples_per_second\":", "\"device_input_wait_seconds\":",
                                        "\"loss_scale\":1,", "\"skipped\":0,", "\"peak_cpu_bytes\":",
                                        "\"peak_gpu_bytes\":"};
static const char* const eval_keys[] = {"\"step\":", "\"epoch\":", "\"loss\":", "\"accuracy\":", "\"samples\":",
                                        "\"seconds\":"};

static int has_keys(const char* line, const char* const* keys, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (!strstr(line, keys[i])) return 0;
  return line[0] == '{' && line[strlen(line) - 1] == '}';
}

static void visit(void* user, const char* line) {
  tally* t = (tally*)user;
  if (strstr(line, "{\"kind\":\"step\"") == line) {
    CHECK(has_keys(line, step_keys, sizeof step_keys / sizeof *step_keys));
    if (t->steps < STEPS) t->lrs[t->steps] = strtod(strstr(line, "\"lr\":") + 5, NULL);
    t->steps++;
  } else if (strstr(line, "{\"kind\":\"eval\"") == line) {
    CHECK(has_keys(line, eval_keys, sizeof eval_keys / sizeof *eval_keys));
    t->evals++;
  } else {
    t->other++;
  }
}

typedef struct seen_steps {
  kiln_runtime* rt;
  double lrs[STEPS];
  int peaks_wrong;
} seen_steps;

static int on_step(void* user, const kiln_step_metrics* m) {
  seen_steps* seen = (seen_steps*)user;
  kiln_memory_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.size = sizeof stats;
  if (m->step >= 1 && m->step <= STEPS) seen->lrs[m->step - 1] = m->lr;
  CHECK_OK(kiln_memory_stats_get(seen->rt, KILN_DEVICE_CPU, 0, &stats));
  if (m->peak_cpu_bytes < stats.current_bytes || m->peak_cpu_bytes <= 0 || m->peak_gpu_bytes != 0) {
    fprintf(stderr, "step %lld: peaks %lld (CPU), %lld (GPU) with %lld bytes held after the step\n",
            (long long)m->step, (long long)m->peak_cpu_bytes, (long long)m->peak_gpu_bytes,
            (long long)stats.current_bytes);
    seen->peaks_wrong++;
  }
  return 0;
}

/* SGD with the weight in group 0 (BASE_LR) and the bias in group 1 (BIAS_LR). */
static kiln_optimizer* two_group_sgd(kiln_runtime* rt, kiln_module* model) {
  kiln_tensor *weight = NULL, *bias = NULL;
  const char* name = NULL;
  const kiln_attr lr = kiln_attr_float("lr", BASE_LR), bias_lr = kiln_attr_float("lr", BIAS_LR);
  kiln_optimizer* opt = NULL;
  CHECK_OK(kiln_module_parameter(model, 0, &name, &weight));
  CHECK_OK(kiln_module_parameter(model, 1, &name, &bias));
  CHECK_OK(kiln_optimizer_create(rt, "SGD", &weight, 1, &lr, 1, &opt));
  CHECK_OK(kiln_optimizer_add_group(opt, &bias, 1, &bias_lr, 1));
  kiln_tensor_release(weight);
  kiln_tensor_release(bias);
  return opt;
}

int main(void) {
  kiln_runtime* rt = open_runtime(2);
  blobs data;
  kiln_loader *train = NULL, *valid = NULL;
  kiln_module* model = make_linear(rt);
  kiln_optimizer* opt = two_group_sgd(rt, model);
  kiln_lr_schedule* schedule = NULL;
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o;
  tally t;
  seen_steps seen;
  double bias_lr = 0;
  int i;

  blobs_make(rt, STEPS * 4, 8, &data);
  train = make_loader(&data, 4, 1);
  valid = make_loader(&data, 10, 0);
  {
    const kiln_attr config[2] = {kiln_attr_int("step_size", 2), kiln_attr_float("gamma", 0.5)};
    CHECK_OK(kiln_lr_schedule_create(rt, "step", config, 2, &schedule));
  }
  memset(&t, 0, sizeof t);
  memset(&seen, 0, sizeof seen);
  seen.rt = rt;
  o = trainer_options(model, opt, train);
  o.schedule = schedule;
  o.validation = valid;
  o.eval_every = 3;
  o.metrics_path = PATH;
  o.on_step = on_step;
  o.user_data = &seen;
  CHECK_OK(kiln_trainer_create(rt, &o, &trainer));
  CHECK_OK(kiln_trainer_run(trainer));
  CHECK(count_lines(PATH, visit, &t) == STEPS + 2);
  CHECK(t.steps == STEPS && t.evals == 2 && t.other == 0);
  for (i = 0; i < STEPS; ++i) {
    const double want = BASE_LR * pow(0.5, i / 2);
    CHECK(fabs(seen.lrs[i] - want) <= 1e-12);
    CHECK(fabs(t.lrs[i] - want) <= 1e-8 * want);
  }
  CHECK(seen.peaks_wrong == 0);
  /* The bias group follows the schedule from its own base rate. */
  CHECK_OK(kiln_optimizer_get_hyper(opt, 1, "lr", &bias_lr));
  CHECK(fabs(bias_lr - BIAS_LR * pow(0.5, (STEPS - 1) / 2)) <= 1e-12);
  kiln_trainer_release(trainer);
  trainer = NULL;

  o.metrics_path = KILN_TRAINER_TEST_DIR "/no-such-folder/metrics.jsonl";
  CHECK_ERROR(kiln_trainer_create(rt, &o, &trainer), KILN_ERR_IO, "metrics file",
              KILN_TRAINER_TEST_DIR "/no-such-folder/metrics.jsonl");
  CHECK(trainer == NULL);

  kiln_lr_schedule_release(schedule);
  kiln_optimizer_release(opt);
  kiln_module_release(model);
  kiln_loader_release(train);
  kiln_loader_release(valid);
  blobs_free(&data);
  kiln_runtime_release(rt);
  return check_report("trainer/metrics");
}
