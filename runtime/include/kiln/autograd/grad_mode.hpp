// Whether ops record the tape. The switch is per runtime and per thread (a
// host may evaluate on one thread while it trains on another), kept in a
// thread-local table keyed by runtime id, so runtimes never see each other's.
#pragma once

#include <cstdint>

namespace kiln {

class Runtime;

bool grad_enabled(uint64_t runtime_id);
void set_grad_enabled(uint64_t runtime_id, bool enabled);

// RAII: grad recording off (or on) for this runtime on this thread.
class GradModeGuard {
 public:
  GradModeGuard(const Runtime& rt, bool enabled);
  ~GradModeGuard();
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  uint64_t runtime_id_;
  bool previous_;
};

struct NoGradGuard : GradModeGuard {
  explicit NoGradGuard(const Runtime& rt) : GradModeGuard(rt, false) {}
};

}  // namespace kiln
