// A caching device allocator in the manner of PyTorch's CUDA caching
// allocator. Memory is reserved from the device in segments
// (kiln/memory/caching_sizes.hpp) and carved into blocks; a freed block
// returns to a pool, merged with free neighbours, and serves later requests
// without a device call (a cudaMalloc synchronises the whole device).
//
// Blocks are stream-ordered: a block is reused only by requests on the
// stream that allocated it, where later work is queued after the work that
// used it. When other streams used it too (record_stream), it returns to
// the pool only once events recorded on those streams at free time have
// completed.
//
// When the device refuses a segment, or a segment would take reserved
// memory over the cap, every cached free segment is given back and the
// request retried once; a second failure throws Error(out_of_memory) with
// the request, the device and the statistics.
//
// The logic talks to the device through a SegmentBackend only, so tests
// drive it with a fake one. One mutex guards all state.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "kiln/memory/allocator.hpp"
#include "kiln/memory/segment_backend.hpp"

namespace kiln {

namespace caching {
struct AllocatorState;
}

struct CachingAllocatorOptions {
  size_t limit_bytes = 0;       // at most this many bytes reserved; 0: no cap but the device's size
  StreamId default_stream = 0;  // the stream Allocator::allocate(bytes) serves
  // Where destruction reports blocks still in use; stderr when empty.
  std::function<void(const std::string&)> report;
};

class CachingAllocator final : public Allocator {
 public:
  CachingAllocator(std::unique_ptr<SegmentBackend> backend, CachingAllocatorOptions options = {});
  // Gives every segment back. Blocks still in use are reported (a leak, or a
  // DataPtr that outlived its allocator) and their memory goes too; their
  // DataPtrs may still be destroyed afterwards.
  ~CachingAllocator() override;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  Device device() const override;
  DataPtr allocate(size_t bytes) override;  // on the default stream
  DataPtr allocate(size_t bytes, StreamId stream);
  // Tells the allocator that work on `stream` uses the allocation at `ptr`
  // (the pointer allocate returned): when it is freed, it is not reused
  // before that work has run. Throws Error(invalid_argument) for a pointer
  // this allocator does not hold.
  void record_stream(const void* ptr, StreamId stream);
  // Waits for the streams of blocks freed with pending work, then gives
  // every segment with no block in use back to the device.
  void empty_cache() override;
  MemoryStats stats() const override;
  void reset_peak() override;

 private:
  std::unique_ptr<caching::AllocatorState> state_;
};

}  // namespace kiln
