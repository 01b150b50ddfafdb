/* Runs a test as a job of several processes on this machine: the parent
 * forks one child per rank (before it has made any runtime or thread), each
 * child runs `rank_main` and exits with its result, and the parent collects
 * them, killing any child still running after the deadline. The ranks meet
 * on loopback at a port that was free a moment before. */
#ifndef KILN_TEST_DIST_RANKS_H
#define KILN_TEST_DIST_RANKS_H

#define _POSIX_C_SOURCE 200809L

#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kiln/kiln.h"

#define MAX_RANKS 16

typedef int (*rank_main_fn)(int rank, int world, int port, void* user);

/* A TCP port nothing listens on now. */
static inline int free_port(void) {
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  int port = 0, fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (bind(fd, (struct sockaddr*)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr*)&a, &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

static inline double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Each rank's exit status goes to statuses[rank] (as waitpid gives it);
 * returns the number of ranks that did not exit with 0. A rank still
 * running after `deadline_s` seconds is killed (and counted). */
static inline int run_ranks(int world, rank_main_fn rank_main, void* user, double deadline_s, int* statuses) {
  pid_t pids[MAX_RANKS];
  int done[MAX_RANKS] = {0};
  int r, left = world, failed = 0;
  const int port = free_port();
  const double end = seconds_now() + deadline_s;
  fflush(NULL);
  for (r = 0; r < world; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) _exit(rank_main(r, world, port, user));
  }
  while (left > 0) {
    for (r = 0; r < world; ++r) {
      int status = 0;
      if (done[r] || waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
      done[r] = 1;
      --left;
      statuses[r] = status;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
    if (left > 0 && seconds_now() > end) {
      for (r = 0; r < world; ++r) {
        if (done[r]) continue;
        fprintf(stderr, "rank %d still runs after %.0f s: killed\n", r, deadline_s);
        kill(pids[r], SIGKILL);
        waitpid(pids[r], &statuses[r], 0);
        done[r] = 1;
        --left;
        ++failed;
      }
    }
    if (left > 0) {
      const struct timespec pause = {0, 10000000};
      nanosleep(&pause, NULL);
    }
  }
  return failed;
}

/* A group for `rank` of `world` on loopback at `port`. */
static inline kiln_status make_group(kiln_runtime* rt, int rank, int world, int port, double timeout_s,
                                     kiln_process_group** out) {
  kiln_process_group_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.rank = rank;
  o.world_size = world;
  o.master_addr = "127.0.0.1";
  o.master_port = port;
  o.timeout_seconds = timeout_s;
  return kiln_process_group_create(rt, &o, out);
}

#endif /* KILN_TEST_DIST_RANKS_H */
