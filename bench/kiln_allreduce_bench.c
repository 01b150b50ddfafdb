/* All-reduce bandwidth of a process group, one rank per process, started
 * by a launcher:
 *
 *   build/bin/kiln launch --nproc-per-node 2 --no-lua build/bench/kiln_allreduce_bench [gloo|nccl]
 *
 * Rank 0 prints,
 * for f32 tensors of 1 KB to 256 MB, the median time of an in-place sum
 * all-reduce and the bus bandwidth nccl-tests reports: 2 (n - 1) / n bytes
 * per second per rank, the traffic a ring all-reduce puts on each link.
 * argv[1] (optional): "gloo" (default) or "nccl" (tensors on cuda:LOCAL_RANK). */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kiln/kiln.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static int fail(const char* what) {
  fprintf(stderr, "kiln_allreduce_bench: %s: %s\n", what, kiln_last_error());
  return 1;
}

int main(int argc, char** argv) {
  kiln_runtime* rt = NULL;
  kiln_process_group* pg = NULL;
  kiln_process_group_options o;
  const char* backend = argc > 1 ? argv[1] : "gloo";
  const kiln_device_type device = strcmp(backend, "nccl") == 0 ? KILN_DEVICE_CUDA : KILN_DEVICE_CPU;
  const char* local = getenv("LOCAL_RANK");
  int rank = 0, world = 1;
  int64_t bytes;
  if (kiln_runtime_create(NULL, &rt) != KILN_OK) return fail("creating the runtime");
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.backend = backend;
  if (kiln_process_group_create(rt, &o, &pg) != KILN_OK) return fail("meeting the other ranks");
  kiln_process_group_rank(pg, &rank, &world);
  if (rank == 0) {
    printf("all-reduce (sum, f32, in place) over %d ranks, %s backend\n", world, backend);
    printf("%12s %12s %14s\n", "bytes", "median us", "bus GB/s");
  }
  for (bytes = 1024; bytes <= ((int64_t)256 << 20); bytes *= 4) {
    const int64_t n = bytes / 4;
    const int reps = bytes <= (1 << 20) ? 50 : bytes <= (16 << 20) ? 10 : 5;
    double times[50];
    kiln_tensor* t = NULL;
    int i;
    const int index = device == KILN_DEVICE_CUDA && local ? atoi(local) : 0;
    if (kiln_tensor_full(rt, &n, 1, 1.0, KILN_F32, device, index, &t) != KILN_OK)
      return fail("making the tensor");
    for (i = 0; i < 3; ++i) kiln_process_group_all_reduce(pg, t, KILN_REDUCE_SUM, NULL); /* warm up */
    for (i = 0; i < reps; ++i) {
      double start;
      kiln_process_group_barrier(pg, NULL);
      start = now();
      if (kiln_process_group_all_reduce(pg, t, KILN_REDUCE_SUM, NULL) != KILN_OK) return fail("all_reduce");
      times[i] = now() - start;
    }
    qsort(times, (size_t)reps, sizeof times[0], compare);
    if (rank == 0) {
      const double t_med = times[reps / 2];
      const double bus = 2.0 * (world - 1) / world * (double)bytes / t_med / 1e9;
      printf("%12ld %12.1f %14.3f\n", (long)bytes, t_med * 1e6, bus);
      fflush(stdout);
    }
    kiln_tensor_release(t);
  }
  kiln_process_group_release(pg);
  kiln_runtime_release(rt);
  return 0;
}
