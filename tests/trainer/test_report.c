/* The training report through the C API: after a run it holds the split,
 * throughput, utilisation against the CPU's measured peak and memory; it
 * counts the steps after the first; its length can be asked alone, a
 * buffer too small or a NULL buffer with a capacity is refused, and an
 * unknown report option fails at creation. */
#include <stdlib.h>

#include "check.h"
#include "trainer_support.h"

static char* report_of(kiln_trainer* trainer) {
  size_t length = 0, again = 0;
  char* text;
  CHECK_OK(kiln_trainer_report(trainer, NULL, 0, &length));
  text = (char*)malloc(length + 1);
  CHECK_OK(kiln_trainer_report(trainer, text, length + 1, &again));
  CHECK(again == length && strlen(text) == length);
  return text;
}

int main(void) {
  kiln_runtime* rt = open_runtime(3);
  blobs b;
  kiln_loader* train;
  kiln_module* model;
  kiln_optimizer* opt;
  kiln_trainer_options o;
  kiln_trainer* trainer = NULL;
  char small[8];
  char* text;

  blobs_make(rt, 64, 11, &b);
  train = make_loader(&b, 8, 0);
  model = make_linear(rt);
  opt = make_sgd(rt, model, 0.1);
  o = trainer_options(model, opt, train);

  o.report = 2;
  CHECK_ERROR(kiln_trainer_create(rt, &o, &trainer), KILN_ERR_INVALID_ARGUMENT, "options->report is 2");
  o.report = 0;
  REQUIRE_OK(kiln_trainer_create(rt, &o, &trainer));

  /* Before any step: nothing to report, said plainly. */
  text = report_of(trainer);
  CHECK(strstr(text, "no step to report") != NULL);
  free(text);

  CHECK_OK(kiln_trainer_run(trainer)); /* one epoch: 8 steps */
  text = report_of(trainer);
  CHECK(strstr(text, "training report: 7 steps after the first, 56 samples, on cpu, f32") != NULL);
  CHECK(strstr(text, "input wait") && strstr(text, "forward") && strstr(text, "backward"));
  CHECK(strstr(text, "optimizer") && strstr(text, "other") && strstr(text, "samples/s"));
  CHECK(strstr(text, "communication") == NULL); /* one process */
  CHECK(strstr(text, "GFLOP/s f32 peak") != NULL || strstr(text, "TFLOP/s f32 peak") != NULL);
  CHECK(strstr(text, "memory           peak ") != NULL);
  CHECK(strstr(text, "advice") != NULL);
  if (check_failures) fprintf(stderr, "the report:\n%s", text);
  free(text);

  CHECK_ERROR(kiln_trainer_report(trainer, small, sizeof small, NULL), KILN_ERR_INVALID_ARGUMENT,
              "the buffer holds 8 bytes");
  CHECK_ERROR(kiln_trainer_report(trainer, NULL, 16, NULL), KILN_ERR_INVALID_ARGUMENT, "buffer is NULL");
  CHECK_ERROR(kiln_trainer_report(NULL, NULL, 0, NULL), KILN_ERR_INVALID_ARGUMENT, "trainer");

  kiln_trainer_release(trainer);
  kiln_optimizer_release(opt);
  kiln_module_release(model);
  kiln_loader_release(train);
  blobs_free(&b);
  kiln_runtime_release(rt);
  return check_report("trainer/report");
}
