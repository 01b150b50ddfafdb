#include "trainer_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void require_ok(kiln_status status, const char* call, const char* file, int line) {
  if (status == KILN_OK) return;
  fprintf(stderr, "%s:%d: %s failed: %s: %s\n", file, line, call, kiln_status_name(status), kiln_last_error());
  exit(1);
}

kiln_runtime* open_runtime(uint64_t seed) {
  kiln_runtime_options o;
  kiln_runtime* rt = NULL;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.seed = seed;
  o.num_threads = 1;
  REQUIRE_OK(kiln_runtime_create(&o, &rt));
  return rt;
}

int skip_without_gpu(kiln_runtime* rt) {
  int cuda_count = 0;
  const char* reason = NULL;
  REQUIRE_OK(kiln_devices_get(rt, &cuda_count, &reason));
  if (cuda_count > 0) return 0;
  printf("skipped: no GPU: %s\n", reason);
  return 1;
}

/* xorshift64*: a small generator with a fixed sequence per seed. */
static double uniform(uint64_t* state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return (double)((*state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static double normal(uint64_t* state) {
  const double u1 = uniform(state), u2 = uniform(state);
  return sqrt(-2.0 * log(u1 > 0 ? u1 : 1e-300)) * cos(6.283185307179586 * u2);
}

/* The tensors of b's points and a "tensors" source over them (which copies them). */
static void blobs_bind(kiln_runtime* rt, blobs* b) {
  const int64_t n = b->n, input_shape[2] = {n, 2}, target_shape[1] = {n};
  REQUIRE_OK(kiln_tensor_from_data(rt, b->x, (size_t)n * 2 * sizeof(float), input_shape, 2, KILN_F32, &b->inputs));
  REQUIRE_OK(kiln_tensor_from_data(rt, b->y, (size_t)n * sizeof(int64_t), target_shape, 1, KILN_I64, &b->targets));
  {
    const kiln_attr config[2] = {kiln_attr_tensor("input", b->inputs), kiln_attr_tensor("target", b->targets)};
    REQUIRE_OK(kiln_data_source_create(rt, "tensors", config, 2, &b->source));
  }
}

void blobs_make(kiln_runtime* rt, int64_t n, uint64_t seed, blobs* out) {
  uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
  int64_t i;
  memset(out, 0, sizeof *out);
  out->n = n;
  out->x = (float*)malloc((size_t)n * 2 * sizeof(float));
  out->y = (int64_t*)malloc((size_t)n * sizeof(int64_t));
  for (i = 0; i < n; ++i) {
    const double centre = (i % 2) ? 2.0 : -2.0;
    out->y[i] = i % 2;
    out->x[2 * i] = (float)(centre + normal(&state));
    out->x[2 * i + 1] = (float)(centre + normal(&state));
  }
  blobs_bind(rt, out);
}

void blobs_poison(kiln_runtime* rt, blobs* b, int64_t first, int64_t count) {
  int64_t i;
  for (i = 2 * first; i < 2 * (first + count); ++i) b->x[i] = (float)NAN;
  kiln_data_source_release(b->source);
  kiln_tensor_release(b->inputs);
  kiln_tensor_release(b->targets);
  blobs_bind(rt, b);
}

void blobs_drop(kiln_runtime* rt, blobs* b, int64_t first, int64_t count) {
  const int64_t rest = b->n - first - count;
  memmove(b->x + 2 * first, b->x + 2 * (first + count), (size_t)rest * 2 * sizeof(float));
  memmove(b->y + first, b->y + first + count, (size_t)rest * sizeof(int64_t));
  b->n -= count;
  kiln_data_source_release(b->source);
  kiln_tensor_release(b->inputs);
  kiln_tensor_release(b->targets);
  blobs_bind(rt, b);
}

void blobs_free(blobs* b) {
  kiln_data_source_release(b->source);
  kiln_tensor_release(b->inputs);
  kiln_tensor_release(b->targets);
  free(b->x);
  free(b->y);
  memset(b, 0, sizeof *b);
}

kiln_loader* make_loader(const blobs* b, int64_t batch_size, int shuffle) {
  return make_loader_on(b, batch_size, shuffle, KILN_DEVICE_CPU);
}

kiln_loader* make_loader_on(const blobs* b, int64_t batch_size, int shuffle, kiln_device_type device) {
  kiln_loader_options o;
  kiln_loader* loader = NULL;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.batch_size = batch_size;
  o.shuffle = shuffle;
  o.seed = 7;
  o.device = device;
  REQUIRE_OK(kiln_loader_create(b->source, NULL, 0, &o, &loader));
  return loader;
}

kiln_module* make_linear(kiln_runtime* rt) {
  const kiln_attr config[2] = {kiln_attr_int("in_features", 2), kiln_attr_int("out_features", 2)};
  kiln_module* m = NULL;
  REQUIRE_OK(kiln_module_create(rt, "Linear", config, 2, &m));
  return m;
}

kiln_optimizer* make_sgd(kiln_runtime* rt, kiln_module* model, double lr) {
  kiln_tensor* params[2] = {NULL, NULL};
  const kiln_attr hyper[1] = {kiln_attr_float("lr", lr)};
  kiln_optimizer* opt = NULL;
  const char* name = NULL;
  size_t i;
  for (i = 0; i < 2; ++i) REQUIRE_OK(kiln_module_parameter(model, i, &name, &params[i]));
  REQUIRE_OK(kiln_optimizer_create(rt, "SGD", params, 2, hyper, 1, &opt));
  for (i = 0; i < 2; ++i) kiln_tensor_release(params[i]);
  return opt;
}

kiln_trainer_options trainer_options(kiln_module* model, kiln_optimizer* opt, kiln_loader* train) {
  kiln_trainer_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.model = model;
  o.optimizer = opt;
  o.train = train;
  o.epochs = 1;
  o.progress = 3;
  return o;
}

void read_linear(kiln_module* model, double out[LINEAR_PARAMS]) {
  float values[4];
  const int64_t counts[2] = {4, 2};
  int64_t i, offset = 0;
  size_t p;
  for (p = 0; p < 2; ++p) {
    kiln_tensor* t = NULL;
    const char* name = NULL;
    REQUIRE_OK(kiln_module_parameter(model, p, &name, &t));
    REQUIRE_OK(kiln_tensor_read(t, values, (size_t)counts[p] * sizeof(float)));
    for (i = 0; i < counts[p]; ++i) out[offset + i] = values[i];
    offset += counts[p];
    kiln_tensor_release(t);
  }
}

int count_lines(const char* path, void (*visit)(void* user, const char* line), void* user) {
  char line[1024];
  int lines = 0;
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    if (visit) visit(user, line);
    ++lines;
  }
  fclose(f);
  return lines;
}
