/* The flow of batches: at most `prefetch` batches wait ready, even when the
 * training loop is slow; stats count the batches and the waits; starting an
 * epoch in the middle of another abandons it cleanly. */
#include "pipeline_test.h"

#include <time.h> /* after pipeline_test.h, which asks for POSIX */

static void sleep_ms(long ms) {
  struct timespec t;
  t.tv_sec = 0;
  t.tv_nsec = ms * 1000000L;
  nanosleep(&t, NULL);
}

static kiln_loader_stats read_stats(const kiln_loader* loader) {
  kiln_loader_stats s;
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  CHECK_OK(kiln_loader_stats_get(loader, &s));
  return s;
}

/* A slow consumer: the workers fill the pipeline up to `prefetch` and stop. */
static void check_prefetch_bound(kiln_data_source* src, int workers, int prefetch) {
  kiln_loader_options o = loader_options(2, workers);
  kiln_loader* loader;
  kiln_loader_stats s;
  kiln_example* batch = NULL;
  int64_t delivered = 0;
  o.prefetch = prefetch;
  loader = open_loader(src, NULL, 0, &o);
  CHECK_OK(kiln_loader_start_epoch(loader, 0));
  for (;;) {
    sleep_ms(10);
    CHECK_OK(kiln_loader_next(loader, &batch));
    if (!batch) break;
    kiln_example_release(batch);
    ++delivered;
  }
  s = read_stats(loader);
  CHECK(delivered == 10);
  CHECK(s.batches == 10);
  CHECK(s.max_ready <= prefetch);
  /* With 10 ms between batches that take microseconds, the pipeline fills. */
  CHECK(s.max_ready == prefetch);
  kiln_loader_release(loader);
}

static void check_stats(kiln_data_source* src, int workers) {
  kiln_loader_options o = loader_options(4, workers);
  kiln_loader* loader = open_loader(src, NULL, 0, &o);
  kiln_loader_stats s, older;
  int64_t indices[20];
  size_t bytes = 0;
  s = read_stats(loader);
  CHECK(s.batches == 0 && s.total_wait_seconds == 0 && s.max_ready == 0);
  CHECK(read_epoch(loader, 0, "input", indices, sizeof indices, &bytes) == 5);
  CHECK(read_epoch(loader, 1, "input", indices, sizeof indices, &bytes) == 5);
  s = read_stats(loader);
  CHECK(s.batches == 10);
  CHECK(s.last_wait_seconds >= 0);
  CHECK(s.total_wait_seconds >= s.last_wait_seconds);
  CHECK(s.max_ready <= (workers == 0 ? 0 : 2 * workers));
  /* An older caller's struct ends before max_ready: it is not written. */
  memset(&older, 0, sizeof older);
  older.size = offsetof(kiln_loader_stats, max_ready);
  older.max_ready = -7;
  CHECK_OK(kiln_loader_stats_get(loader, &older));
  CHECK(older.batches == 10 && older.max_ready == -7);
  kiln_loader_release(loader);
}

/* start_epoch in the middle of an epoch: the rest of it is dropped and the
 * new epoch is complete. */
static void check_abandon(kiln_data_source* src, int workers) {
  kiln_loader_options o = loader_options(3, workers);
  kiln_loader* loader;
  kiln_example* batch = NULL;
  int64_t all[20], got[20], i;
  o.shuffle = 1;
  loader = open_loader(src, NULL, 0, &o);
  for (i = 0; i < 20; ++i) all[i] = i;
  CHECK_OK(kiln_loader_start_epoch(loader, 0));
  CHECK_OK(kiln_loader_next(loader, &batch));
  kiln_example_release(batch);
  CHECK(same_set(got, epoch_indices(loader, 1, got, 20), all, 20));
  CHECK_OK(kiln_loader_start_epoch(loader, 2));
  CHECK_OK(kiln_loader_next(loader, &batch));
  kiln_example_release(batch);
  kiln_loader_release(loader); /* with the rest of epoch 2 in flight */
}

int main(void) {
  kiln_runtime* rt = open_runtime();
  kiln_data_source* src = index_source(rt, 20);
  int workers;
  check_prefetch_bound(src, 4, 3);
  check_prefetch_bound(src, 1, 2);
  for (workers = 0; workers <= 3; ++workers) {
    check_stats(src, workers);
    check_abandon(src, workers);
  }
  kiln_data_source_release(src);
  kiln_runtime_release(rt);
  return check_report("pipeline/flow");
}
