/* A process killed (SIGKILL) while it trains and saves its state after
 * every step, at random moments over many runs, always leaves either no
 * checkpoint (killed before the first save ended) or one that loads
 * completely; a partial file never takes the checkpoint's name. The
 * random delays come from a fixed seed, printed, so a failure can be
 * replayed. */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "checkpoint_support.h"

#define RUNS 40
#define HIDDEN 2048 /* about 1 MB of state per save, so kills land inside saves too */
#define CHECKPOINT "state.safetensors"
#define TEMPORARY_PREFIX "." CHECKPOINT ".tmp."

static uint64_t next_random(uint64_t* s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void sleep_ms(long ms) {
  struct timespec t;
  t.tv_sec = ms / 1000;
  t.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&t, NULL);
}

/* Trains until killed; never returns. */
static void train_and_save_forever(const char* path) {
  training_run r;
  run_open_wide(&r, 3, 1000000, path, 1, HIDDEN);
  for (;;) run_step(&r);
}

/* Files in the folder other than the checkpoint and the killed writers'
 * temporary files; removes those temporary files. */
static int unexpected_files(const char* folder) {
  int unexpected = 0;
  struct dirent* e;
  DIR* d = opendir(folder);
  if (!d) return 1;
  while ((e = readdir(d)) != NULL) {
    char path[1024 + 256 + 2]; /* the folder, a slash, a name */
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, CHECKPOINT)) continue;
    snprintf(path, sizeof path, "%s/%s", folder, e->d_name);
    if (!strncmp(e->d_name, TEMPORARY_PREFIX, strlen(TEMPORARY_PREFIX))) {
      unlink(path);
      continue;
    }
    fprintf(stderr, "unexpected file %s\n", path);
    ++unexpected;
  }
  closedir(d);
  return unexpected;
}

int main(void) {
  char path[1024], folder[1024];
  const uint64_t seed = 20261203;
  uint64_t state = seed;
  int run, loaded = 0, absent = 0;
  snprintf(path, sizeof path, "%s", scratch_path(CHECKPOINT));
  snprintf(folder, sizeof folder, "%s", scratch_path(""));
  printf("delays drawn from seed %llu\n", (unsigned long long)seed);
  unlink(path);
  for (run = 0; run < RUNS; ++run) {
    const long delay_ms = 30 + (long)(next_random(&state) % 400);
    int status = 0;
    const pid_t child = fork();
    if (child == 0) train_and_save_forever(path);
    sleep_ms(delay_ms);
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK(unexpected_files(folder) == 0);
    if (access(path, F_OK) != 0) {
      ++absent;
      continue;
    }
    {
      training_run r;
      run_open_wide(&r, 3, 1000000, NULL, 0, HIDDEN);
      CHECK_OK(kiln_trainer_load(r.trainer, path));
      run_step(&r); /* and training goes on from it */
      run_close(&r);
      ++loaded;
    }
  }
  printf("%d kill runs: %d left a checkpoint that loaded, %d were killed before the first save\n", RUNS, loaded,
         absent);
  CHECK(loaded > 0); /* or the test proved nothing */
  return check_report("checkpoint/kill_during_save");
}
