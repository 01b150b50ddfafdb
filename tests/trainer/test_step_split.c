/* The split of a step's time: forward, backward, optimizer and the rest are
 * measured (no strategy: no communication), they add up to step_seconds,
 * and step_seconds is the wall time of kiln_trainer_step as the host
 * measures it, within 2% (the median over the steps, as the machine is
 * shared). On the CPU the model is a Linear(512 -> 256) on batches of 256,
 * so that a step takes milliseconds and the trainer's reporting after it is
 * noise. With the argument "cuda:0" the same runs on the GPU (where the
 * phases are timed with events on its stream) with a Linear(4096 -> 4096)
 * on batches of 4096, milliseconds there too; without a GPU it says why
 * and exits 77, which CTest reports as skipped. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "trainer_support.h"

#define STEPS 21

/* The problem's sizes on a device. */
typedef struct sizes {
  int64_t features, classes, batch;
} sizes;

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static kiln_data_source* make_source(kiln_runtime* rt, sizes n, kiln_tensor** inputs, kiln_tensor** targets) {
  const int64_t input_shape[2] = {n.batch * 4, n.features}, target_shape[1] = {n.batch * 4};
  float* x = (float*)malloc(sizeof(float) * (size_t)(n.batch * 4 * n.features));
  int64_t* y = (int64_t*)malloc(sizeof(int64_t) * (size_t)(n.batch * 4));
  kiln_data_source* source = NULL;
  int64_t i;
  if (!x || !y) {
    fprintf(stderr, "out of host memory for the problem\n");
    exit(1);
  }
  for (i = 0; i < n.batch * 4 * n.features; ++i) x[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
  for (i = 0; i < n.batch * 4; ++i) y[i] = i % n.classes;
  REQUIRE_OK(kiln_tensor_from_data(rt, x, sizeof(float) * (size_t)(n.batch * 4 * n.features), input_shape, 2,
                                   KILN_F32, inputs));
  REQUIRE_OK(kiln_tensor_from_data(rt, y, sizeof(int64_t) * (size_t)(n.batch * 4), target_shape, 1, KILN_I64,
                                   targets));
  {
    const kiln_attr config[2] = {kiln_attr_tensor("input", *inputs), kiln_attr_tensor("target", *targets)};
    REQUIRE_OK(kiln_data_source_create(rt, "tensors", config, 2, &source));
  }
  free(x);
  free(y);
  return source;
}

int main(int argc, char** argv) {
  const int on_gpu = argc > 1 && strcmp(argv[1], "cuda:0") == 0;
  const kiln_device_type device = on_gpu ? KILN_DEVICE_CUDA : KILN_DEVICE_CPU;
  const sizes cpu_sizes = {512, 256, 256}, gpu_sizes = {4096, 4096, 4096};
  const sizes n = on_gpu ? gpu_sizes : cpu_sizes;
  const char* test_name = on_gpu ? "gpu/trainer_step_split" : "trainer/step_split";
  kiln_runtime* rt = open_runtime(5);
  kiln_tensor *inputs = NULL, *targets = NULL;
  kiln_data_source* source = NULL;
  kiln_attr config[2];
  kiln_module* model = NULL;
  kiln_optimizer* opt;
  kiln_loader* train = NULL;
  kiln_loader_options lo;
  kiln_trainer_options o;
  kiln_trainer* trainer = NULL;
  double gaps[STEPS];
  int steps = 0, done = 0;

  if (on_gpu && skip_without_gpu(rt)) {
    kiln_runtime_release(rt);
    return 77;
  }
  source = make_source(rt, n, &inputs, &targets);
  config[0] = kiln_attr_int("in_features", n.features);
  config[1] = kiln_attr_int("out_features", n.classes);
  memset(&lo, 0, sizeof lo);
  lo.size = sizeof lo;
  lo.batch_size = n.batch;
  lo.device = device;
  REQUIRE_OK(kiln_loader_create(source, NULL, 0, &lo, &train));
  REQUIRE_OK(kiln_module_create(rt, "Linear", config, 2, &model));
  REQUIRE_OK(kiln_module_to(model, device, 0));
  opt = make_sgd(rt, model, 0.01);
  o = trainer_options(model, opt, train);
  o.epochs = 0;
  o.max_steps = STEPS + 1;
  REQUIRE_OK(kiln_trainer_create(rt, &o, &trainer));

  /* The first step builds oneDNN's primitives: not timed. */
  {
    kiln_step_metrics m;
    memset(&m, 0, sizeof m);
    m.size = sizeof m;
    CHECK_OK(kiln_trainer_step(trainer, &m, &done));
  }
  while (!done && steps < STEPS) {
    kiln_step_metrics m;
    double start, wall, parts;
    memset(&m, 0, sizeof m);
    m.size = sizeof m;
    start = now_seconds();
    CHECK_OK(kiln_trainer_step(trainer, &m, &done));
    wall = now_seconds() - start;
    parts = m.input_wait_seconds + m.forward_seconds + m.backward_seconds + m.communication_seconds +
            m.optimizer_seconds + m.other_seconds;
    CHECK(m.forward_seconds > 0 && m.backward_seconds > 0 && m.optimizer_seconds > 0);
    CHECK(m.input_wait_seconds >= 0 && m.other_seconds >= 0);
    CHECK(m.communication_seconds == 0);
    if (fabs(parts - m.step_seconds) > 1e-9 * m.step_seconds + 1e-12) {
      fprintf(stderr, "step %lld: the parts add up to %.9f s, step_seconds is %.9f s\n", (long long)m.step, parts,
              m.step_seconds);
      CHECK(0);
    }
    gaps[steps++] = fabs(wall - m.step_seconds) / wall;
  }
  CHECK(steps == STEPS);
  qsort(gaps, (size_t)steps, sizeof *gaps, by_value);
  if (!(gaps[steps / 2] < 0.02)) {
    fprintf(stderr, "step_seconds differs from the host's wall time by %.2f%% (median)\n", 100.0 * gaps[steps / 2]);
    CHECK(0);
  }

  kiln_trainer_release(trainer);
  kiln_loader_release(train);
  kiln_optimizer_release(opt);
  kiln_module_release(model);
  kiln_data_source_release(source);
  kiln_tensor_release(inputs);
  kiln_tensor_release(targets);
  kiln_runtime_release(rt);
  return check_report(test_name);
}
