// Builds caching allocators on a fake device for the tests.
#pragma once

#include <memory>

#include "fake_segment_backend.hpp"
#include "kiln/memory/caching_allocator.hpp"

namespace kiln::test {

inline constexpr size_t kMiB = size_t(1) << 20;

inline std::unique_ptr<CachingAllocator> make_caching_allocator(const std::shared_ptr<FakeDevice>& device,
                                                                CachingAllocatorOptions options = {}) {
  return std::make_unique<CachingAllocator>(std::make_unique<FakeSegmentBackend>(device), std::move(options));
}

inline char* address(const DataPtr& p) { return static_cast<char*>(p.get()); }

}  // namespace kiln::test
