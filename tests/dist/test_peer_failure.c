/* A peer that goes away mid-job never hangs the others (promise 11 of
 * RELIABILITY.md): 3 ranks all-reduce once, then the victim ends in the way
 * argv[1] names (exit0, exit1, abort, sigkill: its process ends; hang: it
 * never joins) and the survivors' next all-reduce must fail within the
 * timeout plus a margin, with an error naming the victim. argv[2] is the
 * victim's rank (default 2; rank 0 also takes the store down with it).
 * Mode "silent" is promise 12: the victim stays alive but never sends what
 * the others wait to receive from it. */
#include "ranks.h"

#include <sys/resource.h>

#include "check.h"

#define WORLD 3
static const double kTimeout = 4.0; /* seconds, the group's */
static const double kMargin = 6.0;  /* for noticing and naming the peer */

typedef struct {
  const char* mode;
  int victim;
} failure;

static void die(const char* mode) {
  if (strcmp(mode, "exit0") == 0) exit(0);
  if (strcmp(mode, "exit1") == 0) exit(1);
  if (strcmp(mode, "abort") == 0) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core); /* a crash, not a core file in the build tree */
    abort();
  }
  if (strcmp(mode, "sigkill") == 0) kill(getpid(), SIGKILL);
  /* hang, silent: alive but never joining, until well after the others gave up */
  sleep((unsigned)(kTimeout + kMargin + 2));
  _exit(0);
}

static int rank_main(int rank, int world, int port, void* user) {
  const failure* f = user;
  kiln_runtime* rt = NULL;
  kiln_process_group* pg = NULL;
  kiln_tensor* t = NULL;
  const int64_t n = 1000;
  char victim_text[32];
  double start, took;
  kiln_status st;
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  CHECK_OK(make_group(rt, rank, world, port, kTimeout, &pg));
  CHECK_OK(kiln_tensor_full(rt, &n, 1, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &t));
  if (!pg || !t) return check_report("dist/peer_failure");
  CHECK_OK(kiln_process_group_all_reduce(pg, t, KILN_REDUCE_SUM, NULL));
  if (rank == f->victim) die(f->mode);

  start = seconds_now();
  if (strcmp(f->mode, "silent") == 0) {
    st = kiln_process_group_recv(pg, t, f->victim, 3, NULL);
  } else {
    st = kiln_process_group_all_reduce(pg, t, KILN_REDUCE_SUM, NULL);
  }
  took = seconds_now() - start;
  snprintf(victim_text, sizeof victim_text, "rank %d", f->victim);
  CHECK(st == (strcmp(f->mode, "hang") == 0 || strcmp(f->mode, "silent") == 0 ? KILN_ERR_TIMEOUT : KILN_ERR_PEER));
  CHECK(strstr(kiln_last_error(), victim_text) != NULL);
  CHECK(strstr(kiln_last_error(), strcmp(f->mode, "silent") == 0 ? "recv" : "all_reduce") != NULL);
  CHECK(took < kTimeout + kMargin);
  printf("rank %d, victim %s by %s: failed after %.2f s: %s\n", rank, victim_text, f->mode, took, kiln_last_error());
  /* The group is broken: the next call fails at once with the same error. */
  CHECK_ERROR(kiln_process_group_barrier(pg, NULL), st, victim_text);
  kiln_tensor_release(t);
  kiln_process_group_release(pg);
  kiln_runtime_release(rt);
  return check_report("dist/peer_failure survivor");
}

int main(int argc, char** argv) {
  failure f;
  int statuses[MAX_RANKS], r, bad = 0;
  f.mode = argc > 1 ? argv[1] : "sigkill";
  f.victim = argc > 2 ? atoi(argv[2]) : 2;
  run_ranks(WORLD, rank_main, &f, 60.0, statuses);
  for (r = 0; r < WORLD; ++r) {
    if (r == f.victim) continue;
    if (WIFEXITED(statuses[r]) && WEXITSTATUS(statuses[r]) == 0) continue;
    fprintf(stderr, "survivor rank %d ended with status 0x%x\n", r, statuses[r]);
    ++bad;
  }
  printf("victim rank %d (%s): %d of %d survivors failed the checks\n", f.victim, f.mode, bad, WORLD - 1);
  return bad == 0 ? 0 : 1;
}
