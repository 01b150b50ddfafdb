#include <utility>

#include "kiln/dist/process_group.hpp"

namespace kiln::dist {

void Work::wait() {
  std::unique_lock lock(mutex_);
  if (!done_ && complete_) {
    // The first waiter completes the transfer; others wait for it below.
    std::function<void()> complete = std::exchange(complete_, nullptr);
    lock.unlock();
    std::exception_ptr error;
    try {
      complete();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    done_ = true;
    error_ = error;
    cv_.notify_all();
  }
  cv_.wait(lock, [&] { return done_; });
  if (error_) std::rethrow_exception(error_);
}

bool Work::done() const {
  std::lock_guard lock(mutex_);
  return done_;
}

void Work::finish(std::exception_ptr error) {
  std::lock_guard lock(mutex_);
  done_ = true;
  error_ = std::move(error);
  cv_.notify_all();
}

void Work::complete_on_wait(std::function<void()> complete) {
  std::lock_guard lock(mutex_);
  complete_ = std::move(complete);
}

}  // namespace kiln::dist
