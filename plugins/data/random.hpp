// Random numbers for data sources and transforms: Philox blocks keyed by a
// seed (host->philox), so a result depends on the seed and the counter only,
// never on the thread or the order of calls.
#pragma once

#include <cstdint>

#include "support.hpp"

namespace kiln_data {

// A uniform integer in [0, n) from one 32-bit word (n < 2^32).
inline uint64_t uniform_below(uint32_t word, uint64_t n) { return (uint64_t(word) * n) >> 32; }

// A uniform float in [0, 1) from one 32-bit word (its top 24 bits).
inline float uniform_float(uint32_t word) { return float(word >> 8) * (1.0f / 16777216.0f); }

// One 32-bit word for (seed, counter), the first of the Philox block.
inline uint32_t philox_word(uint64_t seed, uint64_t counter) {
  uint32_t block[4];
  host->philox(seed, counter, block);
  return block[0];
}

}  // namespace kiln_data

namespace kiln_data {

// The Philox counter each random transform draws its block from: different
// transforms given the same seed make independent choices.
enum TransformStream : uint64_t { kRandomCropStream = 1, kRandomHflipStream = 2 };

}  // namespace kiln_data
