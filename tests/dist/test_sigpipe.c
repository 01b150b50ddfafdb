/* A peer's end must be an error, never the end of the survivor: Gloo writes
 * with writev, which raises SIGPIPE on a connection whose other end has
 * gone, so a "gloo" group sets SIGPIPE to be ignored when it is at its
 * default action, and keeps a handler the host installed. argv[1] is
 * "default" (nothing installed) or "handler" (the host's own handler). */
#include "ranks.h"

#include "check.h"

static void hosts_handler(int sig) { (void)sig; }

static int rank_main(int rank, int world, int port, void* user) {
  const int host_has_handler = *(const int*)user;
  kiln_runtime* rt = NULL;
  kiln_process_group* pg = NULL;
  struct sigaction now;
  if (host_has_handler) {
    struct sigaction mine;
    memset(&mine, 0, sizeof mine);
    mine.sa_handler = hosts_handler;
    sigemptyset(&mine.sa_mask);
    CHECK(sigaction(SIGPIPE, &mine, NULL) == 0);
  }
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  CHECK_OK(make_group(rt, rank, world, port, 20.0, &pg));
  CHECK(sigaction(SIGPIPE, NULL, &now) == 0);
  if (host_has_handler) {
    CHECK(now.sa_handler == hosts_handler);
  } else {
    CHECK(now.sa_handler == SIG_IGN);
  }
  /* Neither rank leaves before both have their connections: a rank that
   * closes while its peer still sets up makes the peer's creation fail. */
  CHECK_OK(kiln_process_group_barrier(pg, NULL));
  kiln_process_group_release(pg);
  kiln_runtime_release(rt);
  return check_report("dist/sigpipe");
}

int main(int argc, char** argv) {
  int host_has_handler = argc > 1 && strcmp(argv[1], "handler") == 0;
  int statuses[MAX_RANKS];
  struct sigaction before;
  /* The test's own launcher may have inherited an ignored SIGPIPE. */
  memset(&before, 0, sizeof before);
  before.sa_handler = SIG_DFL;
  sigemptyset(&before.sa_mask);
  sigaction(SIGPIPE, &before, NULL);
  return run_ranks(2, rank_main, &host_has_handler, 60.0, statuses) == 0 ? 0 : 1;
}
