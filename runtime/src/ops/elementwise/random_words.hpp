// The 32-bit words of one random op's Philox range, in order: word j is word
// j % 4 of block (offset + j / 4). An element's words depend only on its
// index, never on how the work was split across threads.
#pragma once

#include <array>
#include <cstdint>

#include "kiln/util/philox.hpp"

namespace kiln::elementwise {

// Blocks to reserve for `words` words.
inline uint64_t blocks_for_words(int64_t words) { return uint64_t(words + 3) / 4; }

// Each thread keeps its own reader; it remembers the last block, so reading
// words in order costs one Philox evaluation per four.
class RandomWords {
 public:
  explicit RandomWords(const GeneratorState& range) : range_(range) {}

  uint32_t operator[](int64_t j) {
    const uint64_t block = uint64_t(j) / 4;
    if (block != cached_block_) {
      words_ = Philox::block(range_.seed, 0, range_.offset + block);
      cached_block_ = block;
    }
    return words_[size_t(j % 4)];
  }

 private:
  GeneratorState range_;
  uint64_t cached_block_ = UINT64_MAX;
  std::array<uint32_t, 4> words_{};
};

}  // namespace kiln::elementwise
