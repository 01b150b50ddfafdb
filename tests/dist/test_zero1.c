/* zero1 shards the optimizer's state without changing the result: ranks at
 * batch 64/world each (and at half that with 2 accumulated micro-batches)
 * end with the parameters of 1 process at batch 64 and of ddp, for SGD
 * with momentum and for AdamW, every rank with the same parameters; each
 * rank keeps 1/world of the optimizer's state; and a training state saved
 * by 2 ranks is the file one process writes and resumes on 1, 2 or 4.
 *
 *   kiln_dist_test_zero1 SGD|AdamW   equivalence on 2 and 4 ranks
 *   kiln_dist_test_zero1 memory      the state's bytes on 1, 2 and 4 ranks
 *   kiln_dist_test_zero1 resume      save on 2 ranks, resume on 1, 2 and 4 */
#include "ranks.h"

#include <math.h>

#include "check.h"

#define EXAMPLES 256
#define WIDTH 16 /* inputs, hidden units and outputs (of which labels use 4) */
#define LAYERS 8
#define GLOBAL_BATCH 64
#define STEPS 8
#define PARAM_TENSORS (2 * LAYERS)
/* Equal layers share out evenly: each rank owns LAYERS / world of them. */
#define MAX_PARAMS (LAYERS * (WIDTH * WIDTH + WIDTH))

typedef struct {
  const char* optimizer; /* "SGD" or "AdamW" */
  const char* strategy;  /* "zero1", "ddp" or NULL (one process, no strategy) */
  int64_t accumulate;
  int64_t steps;          /* the trainer stops at this step */
  const char* out_prefix; /* rank r writes its parameters to <prefix>.<r> and its state's bytes to <prefix>.<r>.bytes */
  const char* resume;     /* a training state to load first, or NULL */
  const char* save;       /* where to save the training state at the end, or NULL */
} job;

static kiln_module* make_model(kiln_runtime* rt) {
  const kiln_attr linear[2] = {kiln_attr_int("in_features", WIDTH), kiln_attr_int("out_features", WIDTH)};
  kiln_module* seq = NULL;
  char name[8];
  int i;
  CHECK_OK(kiln_sequential_create(rt, &seq));
  for (i = 0; i < LAYERS; ++i) {
    kiln_module* layer = NULL;
    CHECK_OK(kiln_module_create(rt, "Linear", linear, 2, &layer));
    snprintf(name, sizeof name, "%d", 2 * i);
    CHECK_OK(kiln_sequential_append(seq, name, layer));
    kiln_module_release(layer);
    if (i + 1 < LAYERS) {
      CHECK_OK(kiln_module_create(rt, "ReLU", NULL, 0, &layer));
      snprintf(name, sizeof name, "%d", 2 * i + 1);
      CHECK_OK(kiln_sequential_append(seq, name, layer));
      kiln_module_release(layer);
    }
  }
  return seq;
}

/* The same examples in every process: a fixed linear congruential stream. */
static kiln_data_source* make_data(kiln_runtime* rt) {
  static float x[EXAMPLES * WIDTH];
  static int64_t y[EXAMPLES];
  const int64_t xs[2] = {EXAMPLES, WIDTH}, ys[1] = {EXAMPLES};
  uint32_t state = 12345;
  kiln_tensor *xt = NULL, *yt = NULL;
  kiln_data_source* src = NULL;
  int i;
  for (i = 0; i < EXAMPLES * WIDTH; ++i) {
    state = state * 1664525u + 1013904223u;
    x[i] = (float)(state >> 8) / 16777216.0f * 2.0f - 1.0f;
  }
  for (i = 0; i < EXAMPLES; ++i) y[i] = (x[i * WIDTH] > 0) + 2 * (x[i * WIDTH + 1] > 0);
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

/* The bytes of the optimizer's state tensors (not its step counts). */
static int64_t state_bytes(kiln_optimizer* opt) {
  size_t n = 0, i;
  int64_t bytes = 0;
  CHECK_OK(kiln_optimizer_state_count(opt, &n));
  for (i = 0; i < n; ++i) {
    const char* name = NULL;
    kiln_tensor* t = NULL;
    int64_t numel = 0;
    CHECK_OK(kiln_optimizer_state_get(opt, i, &name, &t));
    CHECK_OK(kiln_tensor_numel(t, &numel));
    if (name && strcmp(name, "step") != 0 && !strstr(name, ".step")) bytes += numel * (int64_t)sizeof(float);
    kiln_tensor_release(t);
  }
  return bytes;
}

static void write_results(const job* j, int rank, kiln_module* model, kiln_optimizer* opt) {
  float values[MAX_PARAMS];
  size_t n_values = 0, i;
  char path[600];
  FILE* f;
  for (i = 0; i < PARAM_TENSORS; ++i) {
    const char* name = NULL;
    kiln_tensor* p = NULL;
    int64_t n = 0;
    CHECK_OK(kiln_module_parameter(model, i, &name, &p));
    CHECK_OK(kiln_tensor_numel(p, &n));
    CHECK(n_values + (size_t)n <= MAX_PARAMS);
    if (n_values + (size_t)n <= MAX_PARAMS) CHECK_OK(kiln_tensor_read(p, values + n_values, (size_t)n * sizeof(float)));
    n_values += (size_t)n;
    kiln_tensor_release(p);
  }
  snprintf(path, sizeof path, "%s.%d", j->out_prefix, rank);
  f = fopen(path, "wb");
  CHECK(f && fwrite(values, sizeof(float), n_values, f) == n_values);
  if (f) fclose(f);
  snprintf(path, sizeof path, "%s.%d.bytes", j->out_prefix, rank);
  f = fopen(path, "w");
  CHECK(f && fprintf(f, "%lld\n", (long long)state_bytes(opt)) > 0);
  if (f) fclose(f);
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
  kiln_strategy* strategy = NULL;
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o;
  kiln_tensor* params[PARAM_TENSORS];
  const char* name = NULL;
  const kiln_attr hyper[2] = {kiln_attr_float("lr", 0.02), kiln_attr_float("momentum", 0.9)};
  char text[16];
  size_t i;

  /* The job's environment, as kiln launch sets it: the group comes from it. */
  snprintf(text, sizeof text, "%d", port);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", text, 1);
  snprintf(text, sizeof text, "%d", rank);
  setenv("RANK", text, 1);
  snprintf(text, sizeof text, "%d", world);
  setenv("WORLD_SIZE", text, 1);
  memset(&ro, 0, sizeof ro);
  ro.size = sizeof ro;
  ro.seed = 1 + (uint64_t)rank; /* other ranks start from other weights */
  ro.num_threads = 1;
  CHECK_OK(kiln_runtime_create(&ro, &rt));
  if (!rt) return check_report("dist/zero1");
  model = make_model(rt);
  data = make_data(rt);
  memset(&lo, 0, sizeof lo);
  lo.size = sizeof lo;
  lo.batch_size = GLOBAL_BATCH / world / j->accumulate;
  lo.shuffle = 1;
  lo.seed = 99;
  lo.rank = rank;
  lo.world_size = world;
  CHECK_OK(kiln_loader_create(data, NULL, 0, &lo, &loader));
  for (i = 0; i < PARAM_TENSORS; ++i) CHECK_OK(kiln_module_parameter(model, i, &name, &params[i]));
  CHECK_OK(kiln_optimizer_create(rt, j->optimizer, params, PARAM_TENSORS, hyper,
                                 strcmp(j->optimizer, "SGD") == 0 ? 2 : 1, &opt));
  if (j->strategy) CHECK_OK(kiln_strategy_create(rt, j->strategy, NULL, 0, &strategy));
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.model = model;
  o.optimizer = opt;
  o.train = loader;
  o.strategy = strategy;
  o.max_steps = j->steps;
  o.accumulate = j->accumulate;
  o.progress = 3;
  CHECK_OK(kiln_trainer_create(rt, &o, &trainer));
  if (trainer && j->resume) CHECK_OK(kiln_trainer_load(trainer, j->resume));
  if (trainer) CHECK_OK(kiln_trainer_run(trainer));
  if (trainer && j->save) CHECK_OK(kiln_trainer_save(trainer, j->save));
  write_results(j, rank, model, opt);
  for (i = 0; i < PARAM_TENSORS; ++i) kiln_tensor_release(params[i]);
  kiln_trainer_release(trainer);
  kiln_strategy_release(strategy);
  kiln_optimizer_release(opt);
  kiln_loader_release(loader);
  kiln_data_source_release(data);
  kiln_module_release(model);
  kiln_runtime_release(rt);
  snprintf(text, sizeof text, "rank %d", rank);
  return check_report(text);
}

static int read_floats(const char* prefix, int rank, float* out) {
  char path[600];
  FILE* f;
  size_t n;
  snprintf(path, sizeof path, "%s.%d", prefix, rank);
  f = fopen(path, "rb");
  n = f ? fread(out, sizeof(float), MAX_PARAMS, f) : 0;
  if (f) fclose(f);
  return n == MAX_PARAMS;
}

static long long read_bytes(const char* prefix, int rank) {
  char path[600];
  long long bytes = -1;
  FILE* f;
  snprintf(path, sizeof path, "%s.%d.bytes", prefix, rank);
  f = fopen(path, "r");
  if (!f || fscanf(f, "%lld", &bytes) != 1) bytes = -1;
  if (f) fclose(f);
  return bytes;
}

static double largest_difference(const float* a, const float* b) {
  double worst = 0;
  int i;
  for (i = 0; i < MAX_PARAMS; ++i) {
    const double d = fabs((double)a[i] - (double)b[i]) / (1e-3 + fabs((double)a[i]));
    if (d > worst) worst = d;
  }
  return worst;
}

/* Runs `j` on `world` ranks into <dir>/<tag>; every rank must end with the
 * same parameters, which are returned in `out`. */
static int run(job* j, int world, const char* dir, const char* tag, float* out) {
  static char prefix[512];
  float other[MAX_PARAMS];
  int statuses[MAX_RANKS], r, ok;
  snprintf(prefix, sizeof prefix, "%s/%s", dir, tag);
  j->out_prefix = prefix;
  if (run_ranks(world, train, j, 120.0, statuses) != 0) return 0;
  ok = read_floats(prefix, 0, out);
  for (r = 1; ok && r < world; ++r) {
    ok = read_floats(prefix, r, other) && memcmp(out, other, sizeof other) == 0;
    if (!ok) fprintf(stderr, "%s: rank %d ends with other parameters than rank 0\n", tag, r);
  }
  return ok;
}

/* zero1 on 2 ranks (with and without accumulation) and on 4 equals one
 * process at the same global batch, and ddp on the same ranks. */
static void equivalence(const char* optimizer, const char* dir) {
  job single = {NULL, NULL, 1, STEPS, NULL, NULL, NULL};
  float reference[MAX_PARAMS], zero1[MAX_PARAMS], ddp[MAX_PARAMS];
  const int worlds[3] = {2, 2, 4};
  const int64_t accumulates[3] = {1, 2, 1};
  int c;
  single.optimizer = optimizer;
  CHECK(run(&single, 1, dir, "single", reference));
  for (c = 0; c < 3; ++c) {
    job z = {NULL, "zero1", 1, STEPS, NULL, NULL, NULL}, d = {NULL, "ddp", 1, STEPS, NULL, NULL, NULL};
    double vs_single, vs_ddp;
    z.optimizer = d.optimizer = optimizer;
    z.accumulate = d.accumulate = accumulates[c];
    if (!run(&z, worlds[c], dir, "zero1", zero1) || !run(&d, worlds[c], dir, "ddp", ddp)) {
      CHECK(!"the jobs ran");
      continue;
    }
    vs_single = largest_difference(reference, zero1);
    vs_ddp = largest_difference(ddp, zero1);
    printf("%s: zero1 on %d ranks x batch %ld x %ld micro-batches: largest relative difference %.3g against 1 x %d, "
           "%.3g against ddp\n",
           optimizer, worlds[c], (long)(GLOBAL_BATCH / worlds[c] / accumulates[c]), (long)accumulates[c], vs_single,
           GLOBAL_BATCH, vs_ddp);
    CHECK(vs_single < 1e-4);
    CHECK(vs_ddp < 1e-5);
  }
}

/* Each rank keeps the state of its share only: 1/world of the whole. */
static void memory(const char* dir) {
  const int worlds[3] = {1, 2, 4};
  long long whole = 0;
  int w;
  for (w = 0; w < 3; ++w) {
    job z = {"AdamW", "zero1", 1, 1, NULL, NULL, NULL};
    float params[MAX_PARAMS];
    long long total = 0, largest = 0;
    int r;
    CHECK(run(&z, worlds[w], dir, "memory", params));
    printf("AdamW state bytes with %d rank(s):", worlds[w]);
    for (r = 0; r < worlds[w]; ++r) {
      const long long bytes = read_bytes(z.out_prefix, r);
      printf(" %lld", bytes);
      total += bytes;
      if (bytes > largest) largest = bytes;
    }
    printf("\n");
    if (worlds[w] == 1) whole = total;
    /* Adam's two moments of every parameter, shared out whole. */
    CHECK(whole == 2 * MAX_PARAMS * (long long)sizeof(float));
    CHECK(total == whole);
    CHECK(largest * worlds[w] == whole);
  }
}

/* The entries of a training state saved by zero1 ranks are those one
 * process saves, with the same sizes. Runs after the jobs: ranks are forked
 * from a process that has made no runtime yet. */
static void same_entries(const char* single_state, const char* zero1_state) {
  kiln_runtime* rt = NULL;
  kiln_example *a = NULL, *b = NULL;
  size_t n_a = 0, n_b = 0, i;
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  CHECK_OK(kiln_safetensors_load(rt, single_state, &a));
  CHECK_OK(kiln_safetensors_load(rt, zero1_state, &b));
  CHECK_OK(kiln_example_field_count(a, &n_a));
  CHECK_OK(kiln_example_field_count(b, &n_b));
  CHECK(n_a == n_b && n_a > 2 * PARAM_TENSORS);
  for (i = 0; a && b && i < n_a; ++i) {
    const char* name = NULL;
    kiln_tensor *ta = NULL, *tb = NULL;
    int64_t na = 0, nb = 0;
    CHECK_OK(kiln_example_field(a, i, &name, &ta));
    if (kiln_example_get(b, name, &tb) != KILN_OK) {
      fprintf(stderr, "the zero1 checkpoint lacks '%s'\n", name);
      CHECK(!"every entry of one process's checkpoint");
    } else {
      CHECK_OK(kiln_tensor_numel(ta, &na));
      CHECK_OK(kiln_tensor_numel(tb, &nb));
      CHECK(na == nb);
    }
    kiln_tensor_release(ta);
    kiln_tensor_release(tb);
  }
  printf("a checkpoint of 2 zero1 ranks holds the %zu entries of one process's\n", n_a);
  kiln_example_release(a);
  kiln_example_release(b);
  kiln_runtime_release(rt);
}

/* A training state saved by 2 zero1 ranks holds the entries one process
 * saves, and resumes on 1 process (no strategy), 2 and 4 ranks like an
 * uninterrupted run. */
static void resume(const char* dir) {
  const int64_t saved_at = 3; /* mid-epoch: 4 batches per epoch */
  char single_state[512], zero1_state[512];
  job first_single = {"AdamW", NULL, 1, saved_at, NULL, NULL, NULL};
  job first_zero1 = {"AdamW", "zero1", 1, saved_at, NULL, NULL, NULL};
  job straight = {"AdamW", "zero1", 1, STEPS, NULL, NULL, NULL};
  float reference[MAX_PARAMS], resumed[MAX_PARAMS];
  const char* strategies[3] = {NULL, "zero1", "zero1"};
  const int worlds[3] = {1, 2, 4};
  int c;
  snprintf(single_state, sizeof single_state, "%s/single.safetensors", dir);
  snprintf(zero1_state, sizeof zero1_state, "%s/zero1.safetensors", dir);
  first_single.save = single_state;
  first_zero1.save = zero1_state;
  CHECK(run(&first_single, 1, dir, "first_single", resumed));
  CHECK(run(&first_zero1, 2, dir, "first_zero1", resumed));
  CHECK(run(&straight, 2, dir, "straight", reference));

  for (c = 0; c < 3; ++c) {
    job again = {"AdamW", NULL, 1, STEPS, NULL, NULL, NULL};
    double d;
    again.strategy = strategies[c];
    again.resume = zero1_state;
    if (!run(&again, worlds[c], dir, "resumed", resumed)) {
      CHECK(!"the resumed job ran");
      continue;
    }
    d = largest_difference(reference, resumed);
    printf("saved by 2 zero1 ranks at step %ld, resumed on %d rank(s): largest relative difference %.3g against "
           "an uninterrupted run\n",
           (long)saved_at, worlds[c], d);
    CHECK(d < 1e-4);
  }
  same_entries(single_state, zero1_state);
}

int main(int argc, char** argv) {
  char dir[] = "/tmp/kiln-zero1-XXXXXX";
  const char* what = argc > 1 ? argv[1] : "SGD";
  CHECK(mkdtemp(dir) != NULL);
  if (strcmp(what, "memory") == 0) {
    memory(dir);
  } else if (strcmp(what, "resume") == 0) {
    resume(dir);
  } else {
    equivalence(what, dir);
  }
  return check_report("dist/zero1");
}
