/* Progress output on stderr: plain lines every log_every steps and one per
 * evaluation (progress 2), a bar redrawn in place with '\r' (progress 1),
 * nothing when quiet (progress 3). stderr is sent to a file to read it. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <unistd.h>

#include "check.h"
#include "trainer_support.h"

#define CAPTURE KILN_TRAINER_TEST_DIR "/progress-test.txt"

typedef struct setup {
  kiln_runtime* rt;
  blobs data;
  kiln_loader* train;
  kiln_loader* valid;
} setup;

/* Runs 2 epochs of 4 steps (evaluating after each) with `progress` and
 * log_every 2, with stderr going to CAPTURE. */
static void run_captured(setup* s, int progress) {
  kiln_module* model = make_linear(s->rt);
  kiln_optimizer* opt = make_sgd(s->rt, model, 0.1);
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o = trainer_options(model, opt, s->train);
  const int saved = dup(2);
  kiln_status created, ran = KILN_OK;
  o.epochs = 2;
  o.progress = progress;
  o.log_every = 2;
  o.validation = s->valid;
  fflush(stderr);
  if (!freopen(CAPTURE, "w", stderr)) return;
  created = kiln_trainer_create(s->rt, &o, &trainer);
  if (created == KILN_OK) ran = kiln_trainer_run(trainer);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  CHECK_OK(created);
  CHECK_OK(ran);
  kiln_trainer_release(trainer);
  kiln_optimizer_release(opt);
  kiln_module_release(model);
}

typedef struct lines {
  int steps;
  int evals;
  int other;
} lines;

static void visit_line(void* user, const char* line) {
  lines* l = (lines*)user;
  if (strncmp(line, "epoch ", 6) == 0 && strstr(line, " step ") && strstr(line, " loss ") && strstr(line, " lr ") &&
      strstr(line, " samples/s"))
    l->steps++;
  else if (strncmp(line, "eval epoch ", 11) == 0 && strstr(line, ": loss ") && strstr(line, " accuracy ") &&
           strstr(line, "(16 samples, "))
    l->evals++;
  else
    l->other++;
}

static long file_text(char* text, size_t size) {
  FILE* f = fopen(CAPTURE, "rb");
  size_t n;
  if (!f) return -1;
  n = fread(text, 1, size - 1, f);
  text[n] = '\0';
  fclose(f);
  return (long)n;
}

int main(void) {
  setup s;
  lines l;
  char text[8192];
  s.rt = open_runtime(6);
  blobs_make(s.rt, 16, 2, &s.data);
  s.train = make_loader(&s.data, 4, 1);
  s.valid = make_loader(&s.data, 16, 0);

  run_captured(&s, 2);
  memset(&l, 0, sizeof l);
  CHECK(count_lines(CAPTURE, visit_line, &l) == 6);
  CHECK(l.steps == 4 && l.evals == 2 && l.other == 0);
  CHECK(file_text(text, sizeof text) > 0);
  CHECK(strstr(text, "epoch 1/2 step 2/4 loss ") == text);
  CHECK(strstr(text, "\neval epoch 1 step 4: loss ") != NULL);
  CHECK(strstr(text, "\nepoch 2/2 step 4/4 loss ") != NULL);

  run_captured(&s, 1);
  CHECK(file_text(text, sizeof text) > 0);
  CHECK(text[0] == '\r');
  CHECK(strstr(text, "epoch 2/2 [") != NULL && strstr(text, "] step 4/4 loss ") != NULL);
  CHECK(strstr(text, " ETA ") != NULL);
  CHECK(strstr(text, "\neval epoch 2 step 8: loss ") != NULL);

  run_captured(&s, 3);
  CHECK(file_text(text, sizeof text) == 0);

  kiln_loader_release(s.train);
  kiln_loader_release(s.valid);
  blobs_free(&s.data);
  kiln_runtime_release(s.rt);
  return check_report("trainer/progress");
}
