/* A trace of chosen steps: steps 3 to 4 of a run of 8 are in the file, each
 * as a "step N" span over its phases and op calls, with the loader workers'
 * track named and their batches as spans; steps outside the range are not.
 * A run that ends before the last traced step still writes what it has.
 * A range that starts before 1 or ends before it starts fails at creation,
 * and tracing while the runtime is being profiled fails at the first
 * traced step, naming the trace. */
#include <stdlib.h>

#include "check.h"
#include "trainer_support.h"

#define TRACE KILN_TRAINER_TEST_DIR "/trace-test.json"
#define SHORT_TRACE KILN_TRAINER_TEST_DIR "/trace-short-test.json"

static int has_span(const char* json, const char* name) {
  char needle[128];
  snprintf(needle, sizeof needle, "{\"name\":\"%s\",\"cat\":\"span\"", name);
  return strstr(json, needle) != NULL;
}

/* Trains with `o` (tracing to o->trace_path) and returns the trace's text. */
static char* traced_run(kiln_runtime* rt, const kiln_trainer_options* o) {
  kiln_trainer* trainer = NULL;
  remove(o->trace_path);
  REQUIRE_OK(kiln_trainer_create(rt, o, &trainer));
  CHECK_OK(kiln_trainer_run(trainer));
  kiln_trainer_release(trainer);
  return read_whole_file(o->trace_path);
}

static kiln_loader* loader_with_workers(const blobs* b) {
  kiln_loader_options o;
  kiln_loader* loader = NULL;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.batch_size = 8;
  o.num_workers = 2;
  /* One batch ahead: the batch of step 4 is made while step 3 runs, inside
   * the traced steps, whatever the machine's load. */
  o.prefetch = 1;
  REQUIRE_OK(kiln_loader_create(b->source, NULL, 0, &o, &loader));
  return loader;
}

int main(void) {
  kiln_runtime* rt = open_runtime(9);
  blobs b;
  kiln_loader* train;
  kiln_module* model;
  kiln_optimizer* opt;
  kiln_trainer_options o;
  kiln_trainer* trainer = NULL;
  char* json;

  blobs_make(rt, 64, 5, &b);
  train = loader_with_workers(&b);
  model = make_linear(rt);
  opt = make_sgd(rt, model, 0.1);
  o = trainer_options(model, opt, train); /* one epoch: 8 steps */
  o.trace_path = TRACE;

  o.trace_first_step = -1;
  CHECK_ERROR(kiln_trainer_create(rt, &o, &trainer), KILN_ERR_INVALID_ARGUMENT, "trace_first_step is -1");
  o.trace_first_step = 4;
  o.trace_last_step = 3;
  CHECK_ERROR(kiln_trainer_create(rt, &o, &trainer), KILN_ERR_INVALID_ARGUMENT, "expected 1 <= first <= last");

  o.trace_first_step = 3;
  o.trace_last_step = 4;
  json = traced_run(rt, &o);
  CHECK(json != NULL);
  if (json) {
    CHECK(has_span(json, "step 3") && has_span(json, "step 4"));
    CHECK(!has_span(json, "step 2") && !has_span(json, "step 5"));
    CHECK(has_span(json, "input wait") && has_span(json, "forward") && has_span(json, "backward"));
    CHECK(has_span(json, "optimizer") && has_span(json, "other"));
    CHECK(!has_span(json, "reduce gradients")); /* no strategy */
    CHECK(strstr(json, "{\"name\":\"linear\",\"cat\":\"forward\"") != NULL);
    CHECK(strstr(json, "\"args\":{\"name\":\"loader worker\"}") != NULL);
    CHECK(strstr(json, " of epoch 0\",\"cat\":\"span\"") != NULL);
    free(json);
  }

  /* Training ends after 2 steps, before the last traced one: step 2 is written. */
  o.max_steps = 2;
  o.epochs = 0;
  o.trace_path = SHORT_TRACE;
  o.trace_first_step = 2;
  o.trace_last_step = 10;
  json = traced_run(rt, &o);
  CHECK(json != NULL && has_span(json, "step 2") && !has_span(json, "step 1"));
  free(json);

  /* The runtime is being profiled already: the first traced step fails. */
  o.max_steps = 0;
  o.epochs = 1;
  o.trace_first_step = 1;
  o.trace_last_step = 1;
  REQUIRE_OK(kiln_trainer_create(rt, &o, &trainer));
  REQUIRE_OK(kiln_profiler_begin(rt));
  CHECK_ERROR(kiln_trainer_run(trainer), KILN_ERR_INVALID_STATE, "cannot trace steps 1 to 1",
              "trace-short-test.json", "being profiled already");
  CHECK_OK(kiln_profiler_end(rt));
  kiln_trainer_release(trainer);

  kiln_optimizer_release(opt);
  kiln_module_release(model);
  kiln_loader_release(train);
  blobs_free(&b);
  kiln_runtime_release(rt);
  return check_report("trainer/trace");
}
