#include "worker.hpp"

#include "kiln/error.hpp"

namespace kiln::dist {

ProcessGroup::Worker::Worker() : thread_([this] { loop(); }) {}

ProcessGroup::Worker::~Worker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  for (Job& job : queue_) {
    job.work->finish(std::make_exception_ptr(
        Error(Status::invalid_state, "the process group was destroyed before this operation ran")));
  }
}

void ProcessGroup::Worker::push(Job job) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void ProcessGroup::Worker::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job.run();
  }
}

}  // namespace kiln::dist
