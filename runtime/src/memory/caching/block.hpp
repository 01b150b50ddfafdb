// A block of the caching allocator: a piece of a segment that is in use,
// free in a pool, or freed but awaiting other streams. A segment's blocks
// form a list by address, so a freed block finds its neighbours to merge.
#pragma once

#include <set>
#include <tuple>
#include <vector>

#include "kiln/memory/segment_backend.hpp"

namespace kiln::caching {

struct AllocatorState;

struct Block {
  enum class Use { free, in_use, awaiting_streams };

  Block(AllocatorState* owner_, char* ptr_, size_t size_, StreamId stream_, bool small_)
      : owner(owner_), ptr(ptr_), size(size_), stream(stream_), small(small_) {}

  AllocatorState* owner;  // null once the allocator is gone while the block was in use
  char* ptr;
  size_t size;      // a multiple of kMinBlockSize
  StreamId stream;  // the stream that allocated the segment; only it reuses the block
  bool small;       // the pool it returns to
  Use use = Use::free;
  size_t requested = 0;   // bytes asked for, while in use
  Block* prev = nullptr;  // the neighbours in its segment
  Block* next = nullptr;
  std::vector<StreamId> other_streams;  // streams besides `stream` that used it (record_stream)
  int pending_events = 0;               // of those streams, recorded at free time and not yet completed

  bool whole_segment() const { return prev == nullptr && next == nullptr; }
};

// Free blocks by stream, then size, then address: the first block at or
// after (stream, size) is the best fit on that stream.
struct BlockKey {
  StreamId stream;
  size_t size;
  const char* ptr;
};

struct BlockOrder {
  using is_transparent = void;
  static BlockKey key(const Block* b) { return {b->stream, b->size, b->ptr}; }
  static const BlockKey& key(const BlockKey& k) { return k; }
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    const BlockKey& x = key(a);
    const BlockKey& y = key(b);
    return std::tie(x.stream, x.size, x.ptr) < std::tie(y.stream, y.size, y.ptr);
  }
};

using BlockPool = std::set<Block*, BlockOrder>;

}  // namespace kiln::caching
