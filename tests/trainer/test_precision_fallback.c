/* kiln_trainer_options.precision_fallback, run with oneDNN capped at AVX2
 * (DNNL_MAX_CPU_ISA, set by CTest), where the CPU computes no bf16: "bf16"
 * fails at creation saying why and how to fall back; with the fallback the
 * trainer writes a warning saying why on the runtime's log and trains in
 * f32, to exactly the parameters an f32 run reaches; values other than 0
 * and 1 are refused. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "trainer_support.h"

typedef struct log_capture {
  int warnings;
  char last[1024];
} log_capture;

static void capture_log(void* user, kiln_log_level level, const char* message) {
  log_capture* c = (log_capture*)user;
  if (level != KILN_LOG_WARNING) return;
  ++c->warnings;
  snprintf(c->last, sizeof c->last, "%s", message);
}

/* One epoch of the blobs problem with `precision` and `fallback`; the
 * status of kiln_trainer_create (training runs only when it succeeds). */
static kiln_status train(const char* precision, int fallback, log_capture* log, double params[LINEAR_PARAMS]) {
  kiln_runtime_options ro;
  kiln_runtime* rt = NULL;
  blobs data;
  kiln_loader* loader;
  kiln_module* model;
  kiln_optimizer* opt;
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o;
  kiln_status status;
  memset(&ro, 0, sizeof ro);
  ro.size = sizeof ro;
  ro.seed = 11;
  ro.num_threads = 1;
  ro.log = capture_log;
  ro.log_user_data = log;
  REQUIRE_OK(kiln_runtime_create(&ro, &rt));
  blobs_make(rt, 64, 2, &data);
  loader = make_loader(&data, 8, 1);
  model = make_linear(rt);
  opt = make_sgd(rt, model, 0.05);
  o = trainer_options(model, opt, loader);
  o.precision = precision;
  o.precision_fallback = fallback;
  status = kiln_trainer_create(rt, &o, &trainer);
  if (status == KILN_OK) {
    CHECK_OK(kiln_trainer_run(trainer));
    kiln_trainer_release(trainer);
    read_linear(model, params);
  }
  kiln_optimizer_release(opt);
  kiln_module_release(model);
  kiln_loader_release(loader);
  blobs_free(&data);
  kiln_runtime_release(rt);
  return status;
}

int main(void) {
  log_capture log;
  double p32[LINEAR_PARAMS], fallen[LINEAR_PARAMS];
  int i;
  memset(&log, 0, sizeof log);
  CHECK_ERROR(train("bf16", 0, &log, fallen), KILN_ERR_UNSUPPORTED, "options->precision is \"bf16\"",
              "this CPU has no bf16 support in oneDNN", "offers avx2", "options->precision_fallback = 1");
  CHECK_ERROR(train("bf16", 2, &log, fallen), KILN_ERR_INVALID_ARGUMENT, "options->precision_fallback is 2",
              "expected 0");
  CHECK(log.warnings == 0);

  CHECK_OK(train("f32", 0, &log, p32));
  CHECK_OK(train("bf16", 1, &log, fallen));
  CHECK(log.warnings == 1);
  CHECK(strstr(log.last, "options->precision \"bf16\" falls back to f32") != NULL);
  CHECK(strstr(log.last, "this CPU has no bf16 support") != NULL);
  for (i = 0; i < LINEAR_PARAMS; ++i) CHECK(fallen[i] == p32[i]);

  /* f16 runs on any CPU (its products go through f32): no fallback, no warning. */
  CHECK_OK(train("f16", 1, &log, fallen));
  CHECK(log.warnings == 1);
  return check_report("trainer/precision_fallback");
}
