/* Promise 23: destroying a runtime joins every thread it started — the
 * workers of its loaders — and leaves no more of OpenMP's, which run its
 * kernels and oneDNN's, than a runtime before it: counted as the entries
 * of /proc/self/task after each of several runtimes. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "kiln/kiln_training.h"

static int thread_count(void) {
  int n = 0;
  struct dirent* entry;
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return -1;
  while ((entry = readdir(tasks)) != NULL)
    if (entry->d_name[0] != '.') ++n;
  closedir(tasks);
  return n;
}

/* A product big enough to be split over oneDNN's threads, random numbers
 * drawn by a kiln kernel over the runtime's, and an epoch of batches made
 * by two loader workers. */
static void use_the_threads(kiln_runtime* rt) {
  const int64_t square[2] = {256, 256}, item[1] = {8}, many[1] = {1 << 20};
  const kiln_attr source_config[2] = {kiln_attr_int("length", 64), kiln_attr_ints("shape", item, 1)};
  const kiln_attr draws = kiln_attr_ints("shape", many, 1);
  kiln_tensor *a = NULL, *product = NULL, *random = NULL;
  kiln_tensor* inputs[2];
  const kiln_op *matmul = NULL, *randn = NULL;
  kiln_data_source* source = NULL;
  kiln_loader* loader = NULL;
  kiln_loader_options o;
  kiln_example* batch = NULL;
  int batches = 0;
  CHECK_OK(kiln_tensor_full(rt, square, 2, 0.5, KILN_F32, KILN_DEVICE_CPU, 0, &a));
  CHECK_OK(kiln_op_find(rt, "matmul", &matmul));
  inputs[0] = inputs[1] = a;
  if (a && matmul) CHECK_OK(kiln_op_call1(rt, matmul, inputs, 2, NULL, 0, &product));
  kiln_tensor_release(product);
  kiln_tensor_release(a);
  CHECK_OK(kiln_op_find(rt, "randn", &randn));
  if (randn) CHECK_OK(kiln_op_call1(rt, randn, NULL, 0, &draws, 1, &random));
  kiln_tensor_release(random);

  CHECK_OK(kiln_data_source_create(rt, "synthetic", source_config, 2, &source));
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.batch_size = 8;
  o.num_workers = 2;
  o.device = KILN_DEVICE_CPU;
  if (source) CHECK_OK(kiln_loader_create(source, NULL, 0, &o, &loader));
  if (loader) {
    CHECK_OK(kiln_loader_start_epoch(loader, 0));
    while (kiln_loader_next(loader, &batch) == KILN_OK && batch) {
      ++batches;
      kiln_example_release(batch);
    }
    CHECK(batches == 8);
  }
  kiln_loader_release(loader);
  kiln_data_source_release(source);
}

/* The thread count once it has stopped changing for 200 ms (at most 5 s):
 * an OpenMP pool started by a thread that has been joined ends on its own
 * schedule. */
static int settled_thread_count(void) {
  const struct timespec tick = {0, 10 * 1000 * 1000};
  int count = thread_count(), still = 0, waited;
  for (waited = 0; waited < 500 && still < 20; ++waited) {
    nanosleep(&tick, NULL);
    const int now = thread_count();
    still = now == count ? still + 1 : 0;
    count = now;
  }
  return count;
}

/* Makes a runtime, works its threads, destroys it; the thread count after. */
static int runtime_round(void) {
  kiln_runtime* rt = NULL;
  kiln_runtime_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.num_threads = 4;
  CHECK_OK(kiln_runtime_create(&o, &rt));
  if (!rt) return -1;
  use_the_threads(rt);
  CHECK(thread_count() >= 4); /* the runtime's 4 threads were running */
  kiln_runtime_release(rt);
  return settled_thread_count();
}

/* A runtime of one thread runs everything on the caller: oneDNN's OpenMP
 * pool is bounded by it too, so a product leaves the process one thread. */
static void one_thread_means_one(void) {
  const int64_t square[2] = {256, 256};
  kiln_runtime* rt = NULL;
  kiln_runtime_options o;
  kiln_tensor *a = NULL, *product = NULL;
  kiln_tensor* inputs[2];
  const kiln_op* matmul = NULL;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.num_threads = 1;
  CHECK_OK(kiln_runtime_create(&o, &rt));
  if (!rt) return;
  CHECK_OK(kiln_tensor_full(rt, square, 2, 0.5, KILN_F32, KILN_DEVICE_CPU, 0, &a));
  CHECK_OK(kiln_op_find(rt, "matmul", &matmul));
  inputs[0] = inputs[1] = a;
  if (a && matmul) CHECK_OK(kiln_op_call1(rt, matmul, inputs, 2, NULL, 0, &product));
  if (thread_count() != 1) fprintf(stderr, "a runtime of one thread left %d threads running\n", thread_count());
  CHECK(thread_count() == 1);
  kiln_tensor_release(product);
  kiln_tensor_release(a);
  kiln_runtime_release(rt);
}

int main(void) {
  /* OpenMP keeps a pool of threads for the life of the calling thread: the
   * warm-up rounds leave that behind, and every later round must come back
   * to the count they left. Each round starts 2 loader workers, so one
   * that joined fewer would show. */
  int baseline, round;
  one_thread_means_one(); /* first: before any runtime has started OpenMP's pool */
  /* The main thread's OpenMP pool grows when a primitive first asks it for
   * the runtime's 4 threads, which oneDNN's process-wide primitive cache may
   * put off to the second round: two rounds come before the baseline. */
  runtime_round();
  baseline = runtime_round();
  for (round = 1; round <= 3; ++round) {
    const int after = runtime_round();
    if (after != baseline) fprintf(stderr, "round %d left %d threads, the warm-up rounds %d\n", round, after, baseline);
    CHECK(after == baseline);
  }
  return check_report("reliability/threads_joined");
}
