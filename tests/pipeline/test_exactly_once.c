/* Every example of an epoch is delivered exactly once, shuffled or not,
 * with batch sizes that divide the length and that do not; drop_last drops
 * only the final partial batch. */
#include "pipeline_test.h"

enum { kLength = 23 };

static void check_epochs(kiln_data_source* src, int64_t batch_size, int shuffle, int drop_last, int workers) {
  kiln_loader_options o = loader_options(batch_size, workers);
  kiln_loader* loader;
  int64_t all[kLength], got[kLength], epoch, i;
  const int64_t kept = drop_last ? kLength / batch_size * batch_size : kLength;
  o.shuffle = shuffle;
  o.drop_last = drop_last;
  o.seed = 7;
  loader = open_loader(src, NULL, 0, &o);
  for (i = 0; i < kLength; ++i) all[i] = i;
  for (epoch = 0; epoch < 3; ++epoch) {
    const int64_t n = epoch_indices(loader, epoch, got, kLength);
    CHECK(n == kept);
    if (!drop_last) {
      CHECK(same_set(got, n, all, kLength));
    } else {
      /* Distinct examples, all of them when nothing was dropped. */
      CHECK(same_set(got, n, got, n));
    }
    if (!shuffle)
      for (i = 0; i < n; ++i) CHECK(got[i] == i);
  }
  kiln_loader_release(loader);
}

int main(void) {
  kiln_runtime* rt = open_runtime();
  kiln_data_source* src = index_source(rt, kLength);
  const int64_t batch_sizes[4] = {1, 4, 23, 30};
  int b, shuffle, drop_last, workers;
  for (b = 0; b < 4; ++b)
    for (shuffle = 0; shuffle < 2; ++shuffle)
      for (drop_last = 0; drop_last < 2; ++drop_last)
        for (workers = 0; workers <= 3; workers += 3) check_epochs(src, batch_sizes[b], shuffle, drop_last, workers);
  kiln_data_source_release(src);
  kiln_runtime_release(rt);
  return check_report("pipeline/exactly_once");
}
