/* The trainer on cuda:0 in mixed precision, as tests/trainer checks it on
 * the CPU: f16 autocast with its default dynamic loss scaling and bf16
 * autocast each train a Linear model to nearly the parameters the CPU
 * reaches, keeping them f32; under f16 a NaN batch is skipped with the
 * scale halved, leaving what a run without that batch leaves; NaN that
 * never goes away ends the run at the minimum scale. Without a GPU it
 * prints why and exits 77, which CTest reports as skipped. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "trainer_support.h"

#define B 16
#define MAX_STEPS 32

typedef struct run {
  kiln_runtime* rt;
  blobs data;
  kiln_loader* train;
  kiln_module* model;
  kiln_optimizer* opt;
  kiln_trainer_options o;
  kiln_step_metrics steps[MAX_STEPS];
  int n_steps;
} run;

static int record_step(void* user, const kiln_step_metrics* m) {
  run* r = (run*)user;
  if (r->n_steps < MAX_STEPS) r->steps[r->n_steps++] = *m;
  return 0;
}

/* 4 batches of B points in order on `device`, with batch `poisoned` made of
 * NaN (-1: none) or batch `dropped` removed (-1: none); `precision`, SGD,
 * `epochs` epochs, loss scaling as the precision has it by default but
 * from a scale of 1024, at which these gradients never overflow f16 (so
 * that both devices take every step). The model is drawn on the CPU from
 * the same seed on every device, then moved. */
static void run_open(run* r, kiln_device_type device, const char* precision, int epochs, int poisoned, int dropped) {
  memset(r, 0, sizeof *r);
  r->rt = open_runtime(3);
  blobs_make(r->rt, 4 * B, 9, &r->data);
  if (poisoned >= 0) blobs_poison(r->rt, &r->data, poisoned * B, B);
  if (dropped >= 0) blobs_drop(r->rt, &r->data, dropped * B, B);
  r->train = make_loader_on(&r->data, B, 0, device);
  r->model = make_linear(r->rt);
  REQUIRE_OK(kiln_module_to(r->model, device, 0));
  r->opt = make_sgd(r->rt, r->model, 0.1);
  r->o = trainer_options(r->model, r->opt, r->train);
  r->o.precision = precision;
  r->o.loss_scale_init = 1024;
  r->o.epochs = epochs;
  r->o.on_step = record_step;
  r->o.user_data = r;
}

static void run_close(run* r) {
  kiln_optimizer_release(r->opt);
  kiln_module_release(r->model);
  kiln_loader_release(r->train);
  blobs_free(&r->data);
  kiln_runtime_release(r->rt);
}

static kiln_status run_train(run* r) {
  kiln_trainer* trainer = NULL;
  kiln_status status;
  REQUIRE_OK(kiln_trainer_create(r->rt, &r->o, &trainer));
  status = kiln_trainer_run(trainer);
  kiln_trainer_release(trainer);
  return status;
}

static int params_close(const run* a, const run* b, double rtol) {
  double pa[LINEAR_PARAMS], pb[LINEAR_PARAMS];
  int i, close = 1;
  read_linear(a->model, pa);
  read_linear(b->model, pb);
  for (i = 0; i < LINEAR_PARAMS; ++i) close &= fabs(pa[i] - pb[i]) <= rtol * (1e-3 + fabs(pb[i]));
  return close;
}

static int f32_parameters(kiln_module* model) {
  kiln_tensor* w = NULL;
  const char* name = NULL;
  kiln_dtype d = KILN_I32;
  REQUIRE_OK(kiln_module_parameter(model, 0, &name, &w));
  REQUIRE_OK(kiln_tensor_dtype(w, &d));
  kiln_tensor_release(w);
  return d == KILN_F32;
}

/* `precision` on cuda:0 learns, reports the scale it should, keeps f32
 * parameters, and ends near the CPU's run. */
static void trains_like_the_cpu(const char* precision, double scale) {
  run gpu, cpu;
  kiln_status cpu_status;
  int i;
  run_open(&gpu, KILN_DEVICE_CUDA, precision, 5, -1, -1);
  run_open(&cpu, KILN_DEVICE_CPU, precision, 5, -1, -1);
  CHECK_OK(run_train(&gpu));
  CHECK(gpu.n_steps == 20);
  for (i = 0; i < gpu.n_steps; ++i) CHECK(gpu.steps[i].loss_scale == scale && gpu.steps[i].skipped == 0);
  CHECK(gpu.steps[19].loss < 0.7 * gpu.steps[0].loss);
  CHECK(f32_parameters(gpu.model));
  cpu_status = run_train(&cpu);
  if (cpu_status == KILN_ERR_UNSUPPORTED) {
    printf("%s on the CPU skipped: %s\n", precision, kiln_last_error());
  } else {
    CHECK_OK(cpu_status);
    CHECK(params_close(&gpu, &cpu, 2e-2));
  }
  run_close(&cpu);
  run_close(&gpu);
}

static void a_nan_batch_is_skipped(void) {
  run faulty, control;
  run_open(&faulty, KILN_DEVICE_CUDA, "f16", 1, 1, -1);
  run_open(&control, KILN_DEVICE_CUDA, "f16", 1, -1, 1);
  CHECK_OK(run_train(&faulty));
  CHECK_OK(run_train(&control));
  CHECK(faulty.n_steps == 4 && control.n_steps == 3);
  CHECK(faulty.steps[1].skipped == 1 && faulty.steps[1].loss_scale == 1024);
  CHECK(faulty.steps[2].skipped == 0 && faulty.steps[2].loss_scale == 512);
  /* Scales differ by powers of two only: the same parameters up to the
   * device's own reduction order. */
  CHECK(params_close(&faulty, &control, 1e-5));
  run_close(&control);
  run_close(&faulty);
}

static void persistent_nan_stops_at_the_minimum(void) {
  run r;
  run_open(&r, KILN_DEVICE_CUDA, "f16", 8, -1, -1);
  kiln_loader_release(r.train);
  blobs_poison(r.rt, &r.data, 0, r.data.n);
  r.train = make_loader_on(&r.data, B, 0, KILN_DEVICE_CUDA);
  r.o.train = r.train;
  r.o.loss_scale_init = 8;
  CHECK_ERROR(run_train(&r), KILN_ERR_INVALID_STATE, "step 4 hold inf or NaN at the minimum loss scale 1");
  run_close(&r);
}

int main(void) {
  kiln_runtime* rt = open_runtime(1);
  const int skip = skip_without_gpu(rt);
  kiln_runtime_release(rt);
  if (skip) return 77;
  trains_like_the_cpu("f16", 1024);
  trains_like_the_cpu("bf16", 1);
  a_nan_batch_is_skipped();
  persistent_nan_stops_at_the_minimum();
  return check_report("gpu/trainer_precision");
}
