// The runtime's parallel loops for CPU kernels. parallel_for splits a range
// into chunks of at least `grain` items and runs them on OpenMP's threads,
// the calling thread among them, so N workers are the caller and N - 1
// OpenMP threads; a nested call simply runs inline.
//
// Why OpenMP's threads and not threads of kiln's own: oneDNN (Debian's
// build) runs its primitives on OpenMP, whose threads spin for a while
// after each region (GOMP_SPINCOUNT). Threads of kiln's own then fought
// them for the cores at every kiln kernel that followed a oneDNN one, and
// had to be woken from sleep for every loop. One set of threads for both
// starts a kiln loop on threads that are already running.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>

namespace kiln {

class ThreadPool {
 public:
  // num_threads workers besides the caller; 0 runs everything on the caller.
  explicit ThreadPool(int num_threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_workers() const { return workers_; }

  // Calls fn(begin, end) over disjoint chunks covering [0, n) and returns when
  // all are done. Exceptions from fn are rethrown here (the first one).
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  int workers_;
  std::mutex submit_mutex_;  // one parallel loop at a time; a second host thread's runs inline
};

}  // namespace kiln
