// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3"): a counter-based generator. Element i of a random op draws from counter
// (offset + i / 4), so results are the same whatever the thread count and
// split, and the same stream can be reproduced on any device.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

// The generator's arithmetic is also compiled into CUDA kernels, so a GPU
// draws exactly the words the CPU draws.
#ifdef __CUDACC__
#define KILN_PHILOX_HOST_DEVICE __host__ __device__
#else
#define KILN_PHILOX_HOST_DEVICE
#endif

namespace kiln {

struct Philox {
  static std::array<uint32_t, 4> block(uint64_t key, uint64_t counter_hi, uint64_t counter_lo) {
    std::array<uint32_t, 4> words{};
    block(key, counter_hi, counter_lo, words.data());
    return words;
  }

  // The same block written to words[0..3].
  KILN_PHILOX_HOST_DEVICE static void block(uint64_t key, uint64_t counter_hi, uint64_t counter_lo,
                                            uint32_t* words) {
    uint32_t c0 = uint32_t(counter_lo), c1 = uint32_t(counter_lo >> 32);
    uint32_t c2 = uint32_t(counter_hi), c3 = uint32_t(counter_hi >> 32);
    uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
    for (int round = 0; round < 10; ++round) {
      const uint64_t p0 = uint64_t(0xD2511F53u) * c0;
      const uint64_t p1 = uint64_t(0xCD9E8D57u) * c2;
      const uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0;
      const uint32_t n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
      c1 = uint32_t(p1);
      c3 = uint32_t(p0);
      c0 = n0;
      c2 = n2;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    words[0] = c0;
    words[1] = c1;
    words[2] = c2;
    words[3] = c3;
  }

  // Uniform in [0, 1) with 24 random bits.
  KILN_PHILOX_HOST_DEVICE static float to_unit_float(uint32_t x) { return float(x >> 8) * (1.0f / 16777216.0f); }
  // Uniform in [0, 1) with 53 random bits from two words.
  KILN_PHILOX_HOST_DEVICE static double to_unit_double(uint32_t hi, uint32_t lo) {
    return double((uint64_t(hi) << 21) ^ (lo >> 11)) * (1.0 / 9007199254740992.0);
  }
};

// A runtime's random stream: a seed and how many Philox blocks have been used.
// Each random op takes a fresh range of counters, so two ops never share
// numbers and the whole state is two integers (what a checkpoint saves).
struct GeneratorState {
  uint64_t seed = 0;
  uint64_t offset = 0;  // next unused counter
};

}  // namespace kiln
