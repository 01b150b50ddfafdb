#include "kiln/util/thread_pool.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>

namespace kiln {
namespace {

// ThreadSanitizer does not see OpenMP's threads start and meet (libgomp is
// not instrumented), so under it the region's edges are told to it: what
// the caller wrote before a loop happens before every chunk, and every
// chunk before what the caller does after the loop.
#if defined(__SANITIZE_THREAD__)
#define KILN_TELL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KILN_TELL_TSAN 1
#endif
#endif

#ifdef KILN_TELL_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
void happens_before(void* edge) { __tsan_release(edge); }
void happens_after(void* edge) { __tsan_acquire(edge); }
#else
void happens_before(void*) {}
void happens_after(void*) {}
#endif

}  // namespace

ThreadPool::ThreadPool(int num_threads) : workers_(std::max(num_threads, 0) + 1) {}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = std::min<int64_t>((n + grain - 1) / grain, int64_t(workers_) * 4);
  // Inside a parallel region (a kiln loop's chunk, or oneDNN's) the loop
  // runs inline: the region already has the threads.
  if (max_chunks <= 1 || workers_ == 1 || omp_in_parallel()) {
    fn(0, n);
    return;
  }
  std::unique_lock submit(submit_mutex_, std::try_to_lock);
  if (!submit.owns_lock()) {  // another thread of the host is using the pool
    fn(0, n);
    return;
  }
  const int64_t chunk = (n + max_chunks - 1) / max_chunks;
  const int64_t num_chunks = (n + chunk - 1) / chunk;
  std::atomic<int64_t> next{0};
  std::mutex error_mutex;
  std::exception_ptr error;
  // Chunks are taken in turn rather than dealt out, so a thread that starts
  // late takes fewer.
  happens_before(&next);
#pragma omp parallel num_threads(int(std::min<int64_t>(workers_, num_chunks)))
  {
    happens_after(&next);
    for (int64_t c = next.fetch_add(1); c < num_chunks; c = next.fetch_add(1)) {
      const int64_t begin = c * chunk, end = std::min(n, begin + chunk);
      try {
        fn(begin, end);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
    happens_before(&next);
  }
  happens_after(&next);
  if (error) std::rethrow_exception(error);
}

}  // namespace kiln
