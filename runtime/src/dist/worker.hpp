// The thread on which a process group runs its collectives, one at a time,
// in the order they were called: every rank then issues them in the same
// order, as the backends require, while the caller goes on computing.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "kiln/dist/process_group.hpp"

namespace kiln::dist {

class ProcessGroup::Worker {
 public:
  // `run` executes one job on the worker's thread and finishes its Work.
  struct Job {
    std::shared_ptr<Work> work;
    std::function<void()> run;
  };

  Worker();
  // Jobs still queued are finished with an error saying the group was
  // destroyed; the job running is waited for.
  ~Worker();

  void push(Job job);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace kiln::dist
