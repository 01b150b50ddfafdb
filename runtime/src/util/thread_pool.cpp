#include "kiln/util/thread_pool.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>

namespace kiln {

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
#pragma omp parallel num_threads(int(std::min<int64_t>(workers_, num_chunks)))
  for (int64_t c = next.fetch_add(1); c < num_chunks; c = next.fetch_add(1)) {
    const int64_t begin = c * chunk, end = std::min(n, begin + chunk);
    try {
      fn(begin, end);
    } catch (...) {
      const std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace kiln
