// The runtime's worker threads for CPU kernels. parallel_for splits a range
// into chunks of at least `grain` items; the calling thread takes part, so a
// pool of N threads gives N+1 workers and a nested call simply runs inline.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {

class ThreadPool {
 public:
  // num_threads workers besides the caller; 0 runs everything on the caller.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();  // joins every thread
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_workers() const { return int(threads_.size()) + 1; }

  // Calls fn(begin, end) over disjoint chunks covering [0, n) and returns when
  // all are done. Exceptions from fn are rethrown here (the first one).
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  struct Job;
  void worker_loop();
  static void run_chunks(Job& job);

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  Job* job_ = nullptr;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  std::mutex submit_mutex_;  // one parallel job at a time; others wait or run inline
};

}  // namespace kiln
