// The size classes of the caching allocator (those of PyTorch's CUDA caching
// allocator): how a request is rounded, which pool serves it, how large a
// segment is reserved when the pool has no block for it, and when a block is
// split. Few distinct sizes keep freed blocks reusable by later requests.
#pragma once

#include <cstddef>

namespace kiln::caching {

inline constexpr size_t kMiB = size_t(1) << 20;
inline constexpr size_t kMinBlockSize = 512;            // every block is a multiple of this
inline constexpr size_t kSmallRequestLimit = 1 * kMiB;  // requests up to this go to the small pool
inline constexpr size_t kSmallSegment = 2 * kMiB;       // what the small pool reserves at a time
inline constexpr size_t kLargeSegment = 20 * kMiB;      // what the large pool reserves for requests under...
inline constexpr size_t kMinLargeSegment = 10 * kMiB;   // ...this size; larger ones get a segment of their own,
inline constexpr size_t kLargeRounding = 2 * kMiB;      // rounded up to a multiple of this
// The largest request served: rounding any larger one would overflow.
inline constexpr size_t kMaxRequest = ~size_t(0) - kLargeRounding;

constexpr size_t round_up(size_t bytes, size_t multiple) { return (bytes + multiple - 1) / multiple * multiple; }

// The block size that serves a request of `bytes` (> 0, <= kMaxRequest).
constexpr size_t round_request(size_t bytes) { return round_up(bytes, kMinBlockSize); }

constexpr bool is_small_block(size_t rounded) { return rounded <= kSmallRequestLimit; }

// The segment reserved when no cached block fits a block of `rounded` bytes.
constexpr size_t segment_size_for(size_t rounded) {
  if (is_small_block(rounded)) return kSmallSegment;
  if (rounded < kMinLargeSegment) return kLargeSegment;
  return round_up(rounded, kLargeRounding);
}

// Whether a free block serving `rounded` bytes gives its `remaining` bytes
// back to the pool as a block of their own. A large block keeps a remainder
// of up to 1 MiB: such a sliver would only serve small requests, which have
// a pool of their own.
constexpr bool should_split(bool small_pool, size_t remaining) {
  return small_pool ? remaining >= kMinBlockSize : remaining > kSmallRequestLimit;
}

}  // namespace kiln::caching
