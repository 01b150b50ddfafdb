#include "kiln/memory/caching_allocator.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "kiln/error.hpp"
#include "kiln/memory/caching_sizes.hpp"

#include "../human_bytes.hpp"
#include "block.hpp"

namespace kiln {
namespace caching {
namespace {

void free_block(void* ctx, void* ptr);

std::string address_text(const void* ptr) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", ptr);
  return text;
}

}  // namespace

struct AllocatorState {
  AllocatorState(std::unique_ptr<SegmentBackend> b, CachingAllocatorOptions o)
      : backend(std::move(b)), options(std::move(o)), device(backend->device()) {}

  BlockPool& pool_of(bool small) { return small ? small_pool : large_pool; }

  // The best-fitting cached block on `stream`, taken out of its pool.
  Block* take_cached(size_t size, StreamId stream, bool small) {
    BlockPool& pool = pool_of(small);
    const auto it = pool.lower_bound(BlockKey{stream, size, nullptr});
    if (it == pool.end() || (*it)->stream != stream) return nullptr;
    Block* block = *it;
    pool.erase(it);
    return block;
  }

  // A new segment as one block, or null when the device or the cap refuses it.
  Block* reserve_segment(size_t size, StreamId stream, bool small) {
    const size_t bytes = segment_size_for(size);
    // Reserved memory never exceeds the cap, so the subtraction cannot wrap.
    if (options.limit_bytes != 0 && bytes > options.limit_bytes - size_t(counters.reserved_bytes)) return nullptr;
    auto block = std::make_unique<Block>(this, nullptr, bytes, stream, small);
    void* base = backend->reserve(bytes);
    if (!base) return nullptr;
    block->ptr = static_cast<char*>(base);
    try {
      segments.emplace(block->ptr, bytes);
    } catch (...) {
      backend->release(base, bytes);  // unrecorded, it could never be given back
      throw;
    }
    counters.reserved_bytes += int64_t(bytes);
    ++counters.num_reserves;
    return block.release();
  }

  Block* find_or_reserve(size_t size, StreamId stream, bool small) {
    if (Block* block = take_cached(size, stream, small)) {
      ++counters.cache_hits;
      return block;
    }
    return reserve_segment(size, stream, small);
  }

  // Leaves `block` with `size` bytes when the rest is worth a block of its own.
  void split(Block* block, size_t size) {
    const size_t remaining = block->size - size;
    if (!should_split(block->small, remaining)) return;
    auto* rest = new Block(this, block->ptr + size, remaining, block->stream, block->small);
    rest->prev = block;
    rest->next = block->next;
    if (rest->next) rest->next->prev = rest;
    block->next = rest;
    block->size = size;
    pool_of(rest->small).insert(rest);
  }

  DataPtr allocate(size_t bytes, StreamId stream) {
    std::lock_guard lock(mutex);
    if (bytes > kMaxRequest) throw_out_of_memory(bytes, "the size overflows");
    process_completed_events();
    const size_t size = round_request(bytes);
    const bool small = is_small_block(size);
    Block* block = find_or_reserve(size, stream, small);
    if (!block) {
      flush_cache();
      ++counters.num_cache_flushes;
      block = find_or_reserve(size, stream, small);
    }
    if (!block) throw_out_of_memory(bytes, "the cache was emptied and the request retried");
    split(block, size);
    block->use = Block::Use::in_use;
    block->requested = bytes;
    in_use.emplace(block->ptr, block);
    counters.current_bytes += int64_t(bytes);
    counters.peak_bytes = std::max(counters.peak_bytes, counters.current_bytes);
    counters.active_bytes += int64_t(block->size);
    ++counters.num_allocs;
    return DataPtr(block->ptr, block, &free_block);
  }

  void free(Block* block) {
    std::lock_guard lock(mutex);
    in_use.erase(block->ptr);
    counters.current_bytes -= int64_t(block->requested);
    ++counters.num_frees;
    block->requested = 0;
    block->use = Block::Use::awaiting_streams;
    for (StreamId stream : block->other_streams) {
      const EventId event = backend->record_event(stream);
      if (event == 0) continue;  // the backend waited for the stream instead
      try {
        pending.emplace_back(event, block);
        ++block->pending_events;
      } catch (const std::bad_alloc&) {
        backend->wait_event(event);  // no room to remember the event: wait for it now
        backend->destroy_event(event);
      }
    }
    block->other_streams.clear();
    if (block->pending_events == 0) return_to_pool(block);
  }

  void return_to_pool(Block* block) {
    counters.active_bytes -= int64_t(block->size);
    block->use = Block::Use::free;
    if (block->prev && block->prev->use == Block::Use::free) merge(block, block->prev);
    if (block->next && block->next->use == Block::Use::free) merge(block, block->next);
    pool_of(block->small).insert(block);
  }

  // Absorbs the free neighbour `other` into `block` (which is in no pool).
  void merge(Block* block, Block* other) {
    pool_of(other->small).erase(other);
    if (other == block->prev) {
      block->ptr = other->ptr;
      block->prev = other->prev;
      if (block->prev) block->prev->next = block;
    } else {
      block->next = other->next;
      if (block->next) block->next->prev = block;
    }
    block->size += other->size;
    delete other;
  }

  void complete_event(EventId event, Block* block) {
    backend->destroy_event(event);
    if (--block->pending_events == 0) return_to_pool(block);
  }

  void process_completed_events() {
    std::erase_if(pending, [&](const std::pair<EventId, Block*>& p) {
      if (!backend->event_completed(p.first)) return false;
      complete_event(p.first, p.second);
      return true;
    });
  }

  // Waits for every pending event, then gives back each segment that is
  // one free block.
  void flush_cache() {
    for (const auto& [event, block] : pending) {
      backend->wait_event(event);
      complete_event(event, block);
    }
    pending.clear();
    release_free_segments(small_pool);
    release_free_segments(large_pool);
  }

  void release_free_segments(BlockPool& pool) {
    for (auto it = pool.begin(); it != pool.end();) {
      Block* block = *it;
      if (!block->whole_segment()) {
        ++it;
        continue;
      }
      it = pool.erase(it);
      release_segment(block->ptr, block->size);
      delete block;
    }
  }

  void release_segment(char* base, size_t bytes) {
    backend->release(base, bytes);
    segments.erase(base);
    counters.reserved_bytes -= int64_t(bytes);
    ++counters.num_releases;
  }

  void record_stream(const void* ptr, StreamId stream) {
    std::lock_guard lock(mutex);
    const auto it = in_use.find(ptr);
    KILN_CHECK(it != in_use.end(), Status::invalid_argument, "record_stream on ", to_string(device), ": ",
               address_text(ptr), " is not the start of an allocation in use from this allocator");
    Block* block = it->second;
    if (stream == block->stream) return;  // its own stream orders all reuse already
    if (std::find(block->other_streams.begin(), block->other_streams.end(), stream) == block->other_streams.end())
      block->other_streams.push_back(stream);
  }

  MemoryStats snapshot() const {
    MemoryStats s = counters;
    s.cached_free_bytes = s.reserved_bytes - s.active_bytes;
    for (const BlockPool* pool : {&small_pool, &large_pool})
      for (const Block* block : *pool) s.largest_free_block = std::max(s.largest_free_block, int64_t(block->size));
    s.fragmentation = s.cached_free_bytes > 0 ? 1.0 - double(s.largest_free_block) / double(s.cached_free_bytes) : 0.0;
    s.limit_bytes = int64_t(options.limit_bytes);
    return s;
  }

  [[noreturn]] void throw_out_of_memory(size_t bytes, const char* what_was_tried) {
    const MemoryStats s = snapshot();
    const std::string cap = options.limit_bytes ? human_bytes(double(options.limit_bytes)) : "none";
    throw_error(
        Status::out_of_memory,
        str_cat(to_string(device), ": out of memory allocating ", bytes, " bytes (", human_bytes(double(bytes)),
                "): kiln holds ", s.num_allocs - s.num_frees, " allocation(s) on this device (allocated ",
                human_bytes(double(s.current_bytes)), ", reserved ", human_bytes(double(s.reserved_bytes)),
                ", free cached ", human_bytes(double(s.cached_free_bytes)), ", cap ", cap, ", peak allocated ",
                human_bytes(double(s.peak_bytes)), ")", backend->describe_device_memory(), "; ", what_was_tried));
  }

  // Gives every segment back; blocks still in use are reported and handed
  // to their DataPtrs, which delete them alone.
  void teardown() {
    std::lock_guard lock(mutex);
    flush_cache();
    if (!in_use.empty()) {
      int64_t bytes = 0;
      for (const auto& [ptr, block] : in_use) {
        bytes += int64_t(block->requested);
        block->owner = nullptr;
      }
      report(str_cat(to_string(device), ": the allocator was destroyed with ", in_use.size(), " allocation(s) of ",
                     bytes, " bytes still in use; their memory is released with it"));
    }
    for (BlockPool* pool : {&small_pool, &large_pool}) {
      for (Block* block : *pool) delete block;
      pool->clear();
    }
    while (!segments.empty()) release_segment(segments.begin()->first, segments.begin()->second);
  }

  void report(const std::string& message) const {
    if (options.report)
      options.report(message);
    else
      std::fprintf(stderr, "kiln: %s\n", message.c_str());
  }

  std::unique_ptr<SegmentBackend> backend;
  const CachingAllocatorOptions options;
  const Device device;
  mutable std::mutex mutex;
  BlockPool small_pool, large_pool;
  std::unordered_map<const void*, Block*> in_use;   // by address, for record_stream
  std::vector<std::pair<EventId, Block*>> pending;  // events other streams must reach first
  std::unordered_map<char*, size_t> segments;       // base address -> bytes, all reserved memory
  MemoryStats counters;                             // the exact counts; snapshot() derives the rest
};

namespace {

void free_block(void* ctx, void* /*ptr*/) {
  auto* block = static_cast<Block*>(ctx);
  if (AllocatorState* owner = block->owner)
    owner->free(block);
  else
    delete block;  // its allocator, and the memory, are gone already
}

}  // namespace
}  // namespace caching

CachingAllocator::CachingAllocator(std::unique_ptr<SegmentBackend> backend, CachingAllocatorOptions options)
    : state_(std::make_unique<caching::AllocatorState>(std::move(backend), std::move(options))) {}

CachingAllocator::~CachingAllocator() { state_->teardown(); }

Device CachingAllocator::device() const { return state_->device; }

DataPtr CachingAllocator::allocate(size_t bytes) { return allocate(bytes, state_->options.default_stream); }

DataPtr CachingAllocator::allocate(size_t bytes, StreamId stream) {
  if (bytes == 0) return DataPtr();
  return state_->allocate(bytes, stream);
}

void CachingAllocator::record_stream(const void* ptr, StreamId stream) { state_->record_stream(ptr, stream); }

void CachingAllocator::empty_cache() {
  std::lock_guard lock(state_->mutex);
  state_->flush_cache();
}

void CachingAllocator::reset_peak() {
  std::lock_guard lock(state_->mutex);
  state_->counters.peak_bytes = state_->counters.current_bytes;
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->snapshot();
}

}  // namespace kiln
