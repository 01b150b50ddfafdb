/* Promise 2: a checkpoint reaches the disk in the order write the
 * temporary file -> flush it -> rename it over the target -> flush the
 * directory. fsync and rename are interposed by this executable (libkiln's
 * calls to them bind here first) and recorded with the path each touched
 * and, for a flushed file, its size, then forwarded to the kernel. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "kiln/kiln_training.h"

enum { kMaxEvents = 16 };

typedef struct event {
  char kind[8]; /* "fsync" or "rename" */
  char path[PATH_MAX];
  char to[PATH_MAX];
  long long size; /* of a flushed regular file; -1 for a directory */
} event;

static event events[kMaxEvents];
static int n_events = 0;

static event* record(const char* kind) {
  event* e = n_events < kMaxEvents ? &events[n_events++] : &events[kMaxEvents - 1];
  memset(e, 0, sizeof *e);
  strcpy(e->kind, kind);
  return e;
}

/* Exported: the build hides symbols by default, and libkiln must bind to these. */
#define INTERPOSED __attribute__((visibility("default")))

INTERPOSED int fsync(int fd) {
  event* e = record("fsync");
  char link[64];
  struct stat st;
  ssize_t n;
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  n = readlink(link, e->path, sizeof e->path - 1);
  if (n > 0) e->path[n] = '\0';
  e->size = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size : -1;
  return (int)syscall(SYS_fsync, fd);
}

INTERPOSED int rename(const char* from, const char* to) {
  event* e = record("rename");
  strncpy(e->path, from, sizeof e->path - 1);
  strncpy(e->to, to, sizeof e->to - 1);
  return (int)syscall(SYS_renameat, AT_FDCWD, from, AT_FDCWD, to);
}

static kiln_module* make_linear(kiln_runtime* rt) {
  const kiln_attr config[2] = {kiln_attr_int("in_features", 64), kiln_attr_int("out_features", 32)};
  kiln_module* m = NULL;
  CHECK_OK(kiln_module_create(rt, "Linear", config, 2, &m));
  return m;
}

int main(void) {
  char dir[PATH_MAX / 2], target[PATH_MAX], real_target[PATH_MAX], real_dir[PATH_MAX];
  kiln_runtime* rt = NULL;
  kiln_module* model;
  struct stat st;
  int i, rename_at = -1;
  snprintf(dir, sizeof dir, "%s/commit-order-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
  mkdir(dir, 0700);
  snprintf(target, sizeof target, "%s/weights.safetensors", dir);
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  if (!rt) return check_report("reliability/commit_order");
  model = make_linear(rt);
  n_events = 0;
  CHECK_OK(kiln_weights_save(model, target));
  CHECK(realpath(target, real_target) != NULL && realpath(dir, real_dir) != NULL);
  CHECK(stat(target, &st) == 0);

  /* Exactly: the temporary file flushed whole, renamed over the target,
   * then the directory flushed. */
  for (i = 0; i < n_events; ++i)
    if (strcmp(events[i].kind, "rename") == 0) rename_at = i;
  CHECK(n_events == 3 && rename_at == 1);
  if (n_events == 3 && rename_at == 1) {
    CHECK(strcmp(events[0].kind, "fsync") == 0);
    /* The file flushed is the one renamed, in the target's folder, and not the target itself. */
    CHECK(strcmp(strrchr(events[0].path, '/'), strrchr(events[1].path, '/')) == 0);
    CHECK(strncmp(events[0].path, real_dir, strlen(real_dir)) == 0 && strcmp(events[0].path, real_target) != 0);
    CHECK(events[0].size == (long long)st.st_size);     /* flushed after its last byte was written */
    CHECK(strcmp(events[1].to, target) == 0);
    CHECK(strcmp(events[2].kind, "fsync") == 0 && events[2].size == -1);
    CHECK(strcmp(events[2].path, real_dir) == 0);
  }
  for (i = 0; i < n_events; ++i)
    fprintf(stderr, "  %s %s%s%s (%lld bytes)\n", events[i].kind, events[i].path, events[i].to[0] ? " -> " : "",
            events[i].to, events[i].size);
  unlink(target);
  rmdir(dir);
  kiln_module_release(model);
  kiln_runtime_release(rt);
  return check_report("reliability/commit_order");
}
