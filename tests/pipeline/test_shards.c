/* Sharding: with world_size 3 the three ranks' examples are disjoint and
 * together cover the epoch, in every epoch, shuffled or not. */
#include "pipeline_test.h"

enum { kLength = 20, kWorld = 3 };

static void check_shards(kiln_data_source* src, int shuffle) {
  int64_t all[kLength], got[kLength], expected_rank_length[kWorld] = {7, 7, 6}, epoch, i;
  kiln_loader* loaders[kWorld];
  int rank;
  for (i = 0; i < kLength; ++i) all[i] = i;
  for (rank = 0; rank < kWorld; ++rank) {
    kiln_loader_options o = loader_options(3, 2);
    o.shuffle = shuffle;
    o.seed = 99;
    o.rank = rank;
    o.world_size = kWorld;
    loaders[rank] = open_loader(src, NULL, 0, &o);
  }
  for (epoch = 0; epoch < 2; ++epoch) {
    int64_t n = 0;
    for (rank = 0; rank < kWorld; ++rank) {
      const int64_t part = epoch_indices(loaders[rank], epoch, got + n, kLength - n);
      CHECK(part == expected_rank_length[rank]);
      if (!shuffle)
        for (i = 0; i < part; ++i) CHECK(got[n + i] == rank + i * kWorld);
      n += part;
    }
    CHECK(same_set(got, n, all, kLength));
  }
  for (rank = 0; rank < kWorld; ++rank) kiln_loader_release(loaders[rank]);
}

int main(void) {
  kiln_runtime* rt = open_runtime();
  kiln_data_source* src = index_source(rt, kLength);
  check_shards(src, 0);
  check_shards(src, 1);
  kiln_data_source_release(src);
  kiln_runtime_release(rt);
  return check_report("pipeline/shards");
}
