/* Data parallelism changes where the work runs, not the result: 2 ranks at
 * batch 32 each (and at batch 16 with 2 accumulated micro-batches) end with
 * the parameters of 1 process at batch 64, after the same steps over the
 * same shuffled data, for SGD with momentum and for AdamW. Rank 1 starts
 * from other weights (another seed): ddp must broadcast rank 0's.
 *
 * With argv[1] "agree" it checks promise 13 instead: ranks that disagree
 * on the step refuse to save, naming the rank, and write nothing. */
#include "ranks.h"

#include <math.h>

#include "check.h"

#define EXAMPLES 256
#define IN 8
#define HIDDEN 16
#define CLASSES 4
#define STEPS 8
#define MAX_PARAMS (IN * HIDDEN + HIDDEN + HIDDEN * CLASSES + CLASSES)

typedef struct {
  const char* optimizer; /* "SGD" or "AdamW" */
  int64_t batch;         /* per rank */
  int64_t accumulate;
  const char* out_path;  /* rank 0 writes its final parameters here */
  /* Promise 13: rank 1 loads this training state (taken at another step)
   * instead of training, then both ranks try to save to save_path. */
  const char* state_of_rank1;
  const char* save_path; /* the training state is saved here at the end */
} job;

static kiln_module* make_mlp(kiln_runtime* rt) {
  const kiln_attr l1[2] = {kiln_attr_int("in_features", IN), kiln_attr_int("out_features", HIDDEN)};
  const kiln_attr l2[2] = {kiln_attr_int("in_features", HIDDEN), kiln_attr_int("out_features", CLASSES)};
  kiln_module *seq = NULL, *a = NULL, *relu = NULL, *b = NULL;
  CHECK_OK(kiln_sequential_create(rt, &seq));
  CHECK_OK(kiln_module_create(rt, "Linear", l1, 2, &a));
  CHECK_OK(kiln_module_create(rt, "ReLU", NULL, 0, &relu));
  CHECK_OK(kiln_module_create(rt, "Linear", l2, 2, &b));
  CHECK_OK(kiln_sequential_append(seq, "0", a));
  CHECK_OK(kiln_sequential_append(seq, "1", relu));
  CHECK_OK(kiln_sequential_append(seq, "2", b));
  kiln_module_release(a);
  kiln_module_release(relu);
  kiln_module_release(b);
  return seq;
}

/* The same examples in every process: a fixed linear congruential stream. */
static kiln_data_source* make_data(kiln_runtime* rt) {
  static float x[EXAMPLES * IN];
  static int64_t y[EXAMPLES];
  const int64_t xs[2] = {EXAMPLES, IN}, ys[1] = {EXAMPLES};
  uint32_t state = 12345;
  kiln_tensor *xt = NULL, *yt = NULL;
  kiln_data_source* src = NULL;
  int i;
  for (i = 0; i < EXAMPLES * IN; ++i) {
    state = state * 1664525u + 1013904223u;
    x[i] = (float)(state >> 8) / 16777216.0f * 2.0f - 1.0f;
  }
  for (i = 0; i < EXAMPLES; ++i) y[i] = (x[i * IN] > 0) + 2 * (x[i * IN + 1] > 0);
  CHECK_OK(kiln_tensor_from_data(rt, x, sizeof x, xs, 2, KILN_F32, &xt));
  CHECK_OK(kiln_tensor_from_data(rt, y, sizeof y, ys, 1, KILN_I64, &yt));
  {
    const kiln_attr config[2] = {kiln_attr_tensor("input", xt), kiln_attr_tensor("target", yt)};
    CHECK_OK(kiln_data_source_create(rt, "tensors", config, 2, &src));
  }
  kiln_tensor_release(xt);
  kiln_tensor_release(yt);
  return src;
}

static int train(int rank, int world, int port, void* user) {
  const job* j = user;
  kiln_runtime_options ro;
  kiln_runtime* rt = NULL;
  kiln_module* model;
  kiln_data_source* data;
  kiln_loader* loader = NULL;
  kiln_loader_options lo;
  kiln_optimizer* opt = NULL;
  kiln_strategy* ddp = NULL;
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o;
  kiln_tensor* params[4];
  const char* name = NULL;
  const kiln_attr hyper[2] = {kiln_attr_float("lr", 0.05), kiln_attr_float("momentum", 0.9)};
  char port_text[16];
  float values[MAX_PARAMS];
  size_t n_values = 0, i;

  /* The job's environment, as kiln launch sets it: ddp's group comes from it. */
  snprintf(port_text, sizeof port_text, "%d", port);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", port_text, 1);
  setenv("RANK", rank == 0 ? "0" : "1", 1);
  setenv("WORLD_SIZE", world == 1 ? "1" : "2", 1);
  memset(&ro, 0, sizeof ro);
  ro.size = sizeof ro;
  ro.seed = 1 + (uint64_t)rank; /* rank 1 starts from other weights */
  ro.num_threads = 1;
  CHECK_OK(kiln_runtime_create(&ro, &rt));
  if (!rt) return check_report("dist/ddp_equivalence");
  model = make_mlp(rt);
  data = make_data(rt);
  memset(&lo, 0, sizeof lo);
  lo.size = sizeof lo;
  lo.batch_size = j->batch;
  lo.shuffle = 1;
  lo.seed = 99;
  lo.rank = rank;
  lo.world_size = world;
  CHECK_OK(kiln_loader_create(data, NULL, 0, &lo, &loader));
  for (i = 0; i < 4; ++i) CHECK_OK(kiln_module_parameter(model, i, &name, &params[i]));
  CHECK_OK(kiln_optimizer_create(rt, j->optimizer, params, 4, hyper, strcmp(j->optimizer, "SGD") == 0 ? 2 : 1, &opt));
  CHECK_OK(kiln_strategy_create(rt, world > 1 ? "ddp" : "single", NULL, 0, &ddp));
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.model = model;
  o.optimizer = opt;
  o.train = loader;
  o.strategy = ddp;
  o.max_steps = STEPS;
  o.accumulate = j->accumulate;
  o.progress = 3;
  CHECK_OK(kiln_trainer_create(rt, &o, &trainer));
  if (trainer && j->state_of_rank1) {
    if (rank == 1) CHECK_OK(kiln_trainer_load(trainer, j->state_of_rank1));
    CHECK_ERROR(kiln_trainer_save(trainer, j->save_path), KILN_ERR_INVALID_STATE,
                "the ranks disagree: rank 1 has step ", ", rank 0 has 0", "every rank must run the same model");
    CHECK(access(j->save_path, F_OK) != 0); /* nothing written */
    if (rank == 0) CHECK_OK(kiln_trainer_load(trainer, j->state_of_rank1));
    CHECK_OK(kiln_trainer_save(trainer, j->save_path)); /* now they agree: rank 0 writes it */
    if (rank == 0) CHECK(access(j->save_path, F_OK) == 0);
  } else if (trainer) {
    CHECK_OK(kiln_trainer_run(trainer));
    if (j->save_path) CHECK_OK(kiln_trainer_save(trainer, j->save_path));
  }
  for (i = 0; i < 4; ++i) {
    int64_t n = 0;
    CHECK_OK(kiln_tensor_numel(params[i], &n));
    CHECK_OK(kiln_tensor_read(params[i], values + n_values, (size_t)n * sizeof(float)));
    n_values += (size_t)n;
    kiln_tensor_release(params[i]);
  }
  if (rank == 0 && j->out_path) {
    FILE* f = fopen(j->out_path, "wb");
    CHECK(f && fwrite(values, sizeof(float), n_values, f) == n_values);
    if (f) fclose(f);
  }
  kiln_trainer_release(trainer);
  kiln_strategy_release(ddp);
  kiln_optimizer_release(opt);
  kiln_loader_release(loader);
  kiln_data_source_release(data);
  kiln_module_release(model);
  kiln_runtime_release(rt);
  return check_report(rank == 0 ? "dist/ddp_equivalence rank 0" : "dist/ddp_equivalence rank 1");
}

static int read_params(const char* path, float* out) {
  FILE* f = fopen(path, "rb");
  size_t n = f ? fread(out, sizeof(float), MAX_PARAMS, f) : 0;
  if (f) fclose(f);
  return n == MAX_PARAMS;
}

/* Runs `j` on `world` ranks and returns rank 0's final parameters. */
static int run(job* j, int world, const char* path, float* out) {
  int statuses[MAX_RANKS];
  j->out_path = path;
  if (run_ranks(world, train, j, 120.0, statuses) != 0) return 0;
  return read_params(path, out);
}

static void compare(const char* optimizer, int64_t batch, int64_t accumulate, const char* dir) {
  job single = {optimizer, 64, 1, NULL, NULL, NULL}, ddp = {optimizer, batch, accumulate, NULL, NULL, NULL};
  float a[MAX_PARAMS], b[MAX_PARAMS];
  char pa[512], pb[512];
  double worst = 0;
  int i;
  snprintf(pa, sizeof pa, "%s/single.bin", dir);
  snprintf(pb, sizeof pb, "%s/ddp.bin", dir);
  CHECK(run(&single, 1, pa, a));
  CHECK(run(&ddp, 2, pb, b));
  for (i = 0; i < MAX_PARAMS; ++i) {
    const double d = fabs((double)a[i] - (double)b[i]) / (1e-3 + fabs((double)a[i]));
    if (d > worst) worst = d;
  }
  printf("%s: 2 ranks x batch %ld x %ld micro-batches vs 1 x 64: largest relative difference %.3g\n", optimizer,
         (long)batch, (long)accumulate, worst);
  CHECK(worst < 1e-4);
}

/* Promise 13: one process trains a few steps and saves its state; in a job
 * of 2 ranks, rank 1 loads it (so it stands at step STEPS, rank 0 at 0). */
static void ranks_that_disagree_refuse_to_save(const char* dir) {
  job single = {"SGD", 64, 1, NULL, NULL, NULL}, pair = {"SGD", 32, 1, NULL, NULL, NULL};
  char state[512], both[512];
  int statuses[MAX_RANKS];
  snprintf(state, sizeof state, "%s/state.safetensors", dir);
  snprintf(both, sizeof both, "%s/both.safetensors", dir);
  single.save_path = state;
  CHECK(run_ranks(1, train, &single, 120.0, statuses) == 0);
  pair.save_path = both;
  pair.state_of_rank1 = state;
  CHECK(run_ranks(2, train, &pair, 120.0, statuses) == 0);
}

int main(int argc, char** argv) {
  char dir[] = "/tmp/kiln-ddp-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  if (argc > 1 && strcmp(argv[1], "agree") == 0) {
    ranks_that_disagree_refuse_to_save(dir);
    return check_report("dist/ranks_agree_before_saving");
  }
  compare("SGD", 32, 1, dir);
  compare("AdamW", 32, 1, dir);
  compare("SGD", 16, 2, dir);
  compare("AdamW", 16, 2, dir);
  return check_report("dist/ddp_equivalence");
}
