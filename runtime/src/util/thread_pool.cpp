#include "kiln/util/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>

namespace kiln {

namespace {
// True on a thread while it is running chunks, so a kernel that calls
// parallel_for from inside a chunk runs inline instead of deadlocking.
thread_local bool tls_inside_pool = false;
}  // namespace

struct ThreadPool::Job {
  const std::function<void(int64_t, int64_t)>* fn;
  int64_t n, chunk, num_chunks;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<int> active{0};  // workers inside run_chunks for this job
  std::mutex error_mutex;
  std::exception_ptr error;
};

ThreadPool::ThreadPool(int num_threads) {
  threads_.reserve(size_t(std::max(num_threads, 0)));
  for (int i = 0; i < num_threads; ++i) threads_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::run_chunks(Job& job) {
  const bool was_inside = tls_inside_pool;
  tls_inside_pool = true;
  for (;;) {
    const int64_t c = job.next.fetch_add(1);
    if (c >= job.num_chunks) break;
    const int64_t begin = c * job.chunk, end = std::min(job.n, begin + job.chunk);
    try {
      (*job.fn)(begin, end);
    } catch (...) {
      std::lock_guard lock(job.error_mutex);
      if (!job.error) job.error = std::current_exception();
    }
    job.done.fetch_add(1);
  }
  tls_inside_pool = was_inside;
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    Job* job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || (job_ != nullptr && generation_ != seen); });
      if (stopping_) return;
      seen = generation_;
      job = job_;
      job->active.fetch_add(1);
    }
    run_chunks(*job);
    job->active.fetch_sub(1);
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = std::min<int64_t>((n + grain - 1) / grain, int64_t(num_workers()) * 4);
  if (max_chunks <= 1 || threads_.empty() || tls_inside_pool) {
    fn(0, n);
    return;
  }
  std::unique_lock submit(submit_mutex_, std::try_to_lock);
  if (!submit.owns_lock()) {  // another thread of the host is using the pool
    fn(0, n);
    return;
  }
  Job job;
  job.fn = &fn;
  job.n = n;
  job.chunk = (n + max_chunks - 1) / max_chunks;
  job.num_chunks = (n + job.chunk - 1) / job.chunk;
  {
    std::lock_guard lock(mutex_);
    job_ = &job;
    ++generation_;
  }
  wake_.notify_all();
  run_chunks(job);
  {
    // Unpublish the job, then wait until no worker still holds it.
    std::lock_guard lock(mutex_);
    job_ = nullptr;
  }
  while (job.done.load() < job.num_chunks || job.active.load() > 0) std::this_thread::yield();
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace kiln
