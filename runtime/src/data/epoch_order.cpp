// The epoch's order and seeds, drawn from the runtime's Philox generator.
#include "kiln/data/epoch_order.hpp"

#include <numeric>
#include <utility>

#include "kiln/util/philox.hpp"

namespace kiln::data {
namespace {

// The high bits of Philox's upper counter word tell the two streams apart;
// the epoch fills the rest (kMaxEpoch keeps it clear of them).
constexpr uint64_t kShuffleStream = uint64_t(1) << 63;
constexpr uint64_t kExampleSeedStream = uint64_t(1) << 62;

uint64_t random_word64(uint64_t seed, uint64_t stream, int64_t epoch, uint64_t counter) {
  const auto block = Philox::block(seed, stream | uint64_t(epoch), counter);
  return (uint64_t(block[1]) << 32) | block[0];
}

// Uniform in [0, bound) by Lemire's multiply-shift (bias below 2^-64 * bound).
uint64_t below(uint64_t word, uint64_t bound) {
  return uint64_t((static_cast<unsigned __int128>(word) * bound) >> 64);
}

}  // namespace

int64_t shard_length(int64_t num_examples, int rank, int world_size) {
  if (rank >= num_examples) return 0;
  return (num_examples - rank + world_size - 1) / world_size;
}

std::vector<int64_t> epoch_shard(int64_t num_examples, const ShardOptions& options, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(num_examples));
  std::iota(order.begin(), order.end(), int64_t(0));
  if (options.shuffle)
    for (int64_t i = num_examples - 1; i > 0; --i) {
      const uint64_t j = below(random_word64(options.seed, kShuffleStream, epoch, uint64_t(i)), uint64_t(i) + 1);
      std::swap(order[size_t(i)], order[size_t(j)]);
    }
  if (options.world_size == 1) return order;
  std::vector<int64_t> shard;
  shard.reserve(size_t(shard_length(num_examples, options.rank, options.world_size)));
  for (int64_t p = options.rank; p < num_examples; p += options.world_size) shard.push_back(order[size_t(p)]);
  return shard;
}

uint64_t example_seed(uint64_t seed, int64_t epoch, int64_t index) {
  return random_word64(seed, kExampleSeedStream, epoch, uint64_t(index));
}

}  // namespace kiln::data
