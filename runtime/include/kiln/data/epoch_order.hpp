// Which examples an epoch visits, in which order, and with which transform
// seeds. Everything is a function of (seed, epoch, index) through Philox, so
// the epoch is the same whatever the number of workers and on every rank.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::data {

struct ShardOptions {
  bool shuffle = false;
  uint64_t seed = 0;
  int rank = 0;        // 0 <= rank < world_size
  int world_size = 1;  // >= 1
};

// Epochs are numbered 0 .. kMaxEpoch: the epoch shares a Philox counter
// word with the stream tags that keep the shuffle and the seeds apart.
inline constexpr int64_t kMaxEpoch = (int64_t(1) << 62) - 1;

// How many of `num_examples` positions p satisfy p % world_size == rank.
int64_t shard_length(int64_t num_examples, int rank, int world_size);

// The example indices this shard visits in `epoch`, in delivery order: the
// epoch's order (a Fisher-Yates shuffle drawn from (seed, epoch), or
// 0, 1, ... without shuffling), then every world_size-th position from rank.
std::vector<int64_t> epoch_shard(int64_t num_examples, const ShardOptions& options, int64_t epoch);

// The seed the transforms of example `index` receive in `epoch`.
uint64_t example_seed(uint64_t seed, int64_t epoch, int64_t index);

}  // namespace kiln::data
