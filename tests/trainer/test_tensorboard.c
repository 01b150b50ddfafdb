/* The trainer's TensorBoard folder: it is made when the trainer is, and
 * holds one event file whose records are the file-version event, one event
 * per step with the step scalars and one per evaluation with eval/loss and
 * eval/accuracy, each record framed as its length says. A folder that
 * cannot be made fails at creation, naming it. (The records' checksums and
 * protobuf fields are read back by the C++ and Python tests.) */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "trainer_support.h"

#define STEPS 6

typedef struct tally {
  int records;
  int versions;
  int steps;
  int evals;
} tally;

static int contains(const unsigned char* bytes, size_t n, const char* text) {
  const size_t k = strlen(text);
  size_t i;
  for (i = 0; i + k <= n; ++i)
    if (memcmp(bytes + i, text, k) == 0) return 1;
  return 0;
}

/* Walks the records of `path`: a little-endian u64 length, 4 bytes of
 * checksum, the payload, 4 bytes of checksum. 0 when the framing is wrong. */
static int read_records(const char* path, tally* t) {
  unsigned char header[12];
  FILE* f = fopen(path, "rb");
  int ok = f != NULL;
  while (ok && fread(header, 1, 12, f) == 12) {
    uint64_t length = 0;
    unsigned char* payload;
    int i;
    for (i = 7; i >= 0; --i) length = (length << 8) | header[i];
    payload = length < 4096 ? (unsigned char*)malloc((size_t)length + 4) : NULL;
    ok = payload && fread(payload, 1, (size_t)length + 4, f) == (size_t)length + 4;
    if (ok) {
      t->records++;
      if (contains(payload, (size_t)length, "brain.Event:2")) t->versions++;
      if (contains(payload, (size_t)length, "train/loss") && contains(payload, (size_t)length, "train/lr") &&
          contains(payload, (size_t)length, "train/grad_norm") &&
          contains(payload, (size_t)length, "memory/peak_cpu_bytes"))
        t->steps++;
      if (contains(payload, (size_t)length, "eval/loss") && contains(payload, (size_t)length, "eval/accuracy"))
        t->evals++;
    }
    free(payload);
  }
  if (f) {
    ok = ok && feof(f);
    fclose(f);
  }
  return ok;
}

/* The number of entries in `folder`, each checked to be an event file by
 * its name; the path of the last goes into `out`. */
static int only_file(const char* folder, char* out, size_t capacity) {
  DIR* d = opendir(folder);
  struct dirent* e;
  int files = 0;
  if (!d) return 0;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    ++files;
    CHECK(strncmp(e->d_name, "events.out.tfevents.", 20) == 0);
    snprintf(out, capacity, "%s/%s", folder, e->d_name);
  }
  closedir(d);
  return files;
}

int main(void) {
  kiln_runtime* rt = open_runtime(21);
  kiln_module* model = make_linear(rt);
  kiln_optimizer* opt = make_sgd(rt, model, 0.1);
  blobs data;
  kiln_loader* train;
  kiln_loader* valid;
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o;
  char folder[512];
  char file[1024] = "";
  tally t;

  snprintf(folder, sizeof folder, "%s/tensorboard-%ld/run", KILN_TRAINER_TEST_DIR, (long)getpid());
  blobs_make(rt, STEPS * 4, 5, &data);
  train = make_loader(&data, 4, 1);
  valid = make_loader(&data, 8, 0);
  o = trainer_options(model, opt, train);
  o.validation = valid;
  o.eval_every = 3;
  o.tensorboard_dir = folder;
  CHECK_OK(kiln_trainer_create(rt, &o, &trainer));
  /* Made at creation, before any step. */
  CHECK(only_file(folder, file, sizeof file) == 1);
  CHECK_OK(kiln_trainer_run(trainer));
  kiln_trainer_release(trainer);
  trainer = NULL;
  memset(&t, 0, sizeof t);
  CHECK(read_records(file, &t));
  CHECK(t.records == 1 + STEPS + 2);
  CHECK(t.versions == 1);
  CHECK(t.steps == STEPS);
  CHECK(t.evals == 2);
  remove(file);
  remove(folder);
  *strrchr(folder, '/') = '\0';
  remove(folder);

  /* A folder under a plain file cannot be made. */
  {
    char blocked[600];
    FILE* f;
    snprintf(blocked, sizeof blocked, "%s/tensorboard-file-%ld", KILN_TRAINER_TEST_DIR, (long)getpid());
    f = fopen(blocked, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    strcat(blocked, "/runs");
    o.tensorboard_dir = blocked;
    CHECK_ERROR(kiln_trainer_create(rt, &o, &trainer), KILN_ERR_IO, "cannot create the TensorBoard folder", blocked);
    CHECK(trainer == NULL);
    *strrchr(blocked, '/') = '\0';
    remove(blocked);
  }

  kiln_optimizer_release(opt);
  kiln_module_release(model);
  kiln_loader_release(train);
  kiln_loader_release(valid);
  blobs_free(&data);
  kiln_runtime_release(rt);
  return check_report("trainer/tensorboard");
}
