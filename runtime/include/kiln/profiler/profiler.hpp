// The per-op profiler of a runtime. While it is on, every op call and every
// backward function records one event: name, phase, device, start and end on
// the steady clock, the time spent in ops it called, its nesting depth, the
// thread and the input shapes. Off, an op call pays one relaxed load.
//
//   kiln::Runtime rt;
//   rt.profiler().begin();
//   ... forward, rt.backward(loss), optimizer step ...
//   rt.profiler().end();
//   std::string table = kiln::profile_table(rt.profiler().events());
//   kiln::write_chrome_trace(rt.profiler().events(), "trace.json");
//
// Threads record into buffers of their own (a loader's workers and the
// thread pool may call ops), merged when the events are read. Times are
// host times: on a GPU an op's time is the time to launch its kernels
// unless the op waits for the device.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "kiln/device.hpp"
#include "kiln/shape.hpp"

namespace kiln {

class Tensor;

// Ops the autograd engine runs (backward functions and the ops they call)
// are in the backward phase; every other op call is forward.
enum class ProfilePhase : uint8_t { forward, backward };
const char* phase_name(ProfilePhase phase);  // "forward", "backward"

struct ProfileEvent {
  std::string name;  // the op, or "<op> backward" for a backward function
  ProfilePhase phase = ProfilePhase::forward;
  Device device;
  int64_t start_ns = 0;     // steady clock, from the start of profiling
  int64_t end_ns = 0;
  int64_t children_ns = 0;  // time inside the profiled calls it made
  int depth = 0;            // 0: no profiled call encloses it on its thread
  int thread = 0;           // 1, 2, ... in the order threads first recorded
  std::vector<Shape> input_shapes;  // undefined (optional) inputs are rank-0 placeholders

  int64_t total_ns() const { return end_ns - start_ns; }
  int64_t self_ns() const { return total_ns() - children_ns; }
};

class ProfileSession;

class Profiler {
 public:
  Profiler();
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // The dispatcher's check: one relaxed load.
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  // Starts recording, dropping the events of an earlier profile. Throws
  // invalid_state when profiling is already on.
  void begin();
  // Stops recording. Throws invalid_state when profiling is off.
  void end();
  // The events of the last finished profile, ordered by thread, then start.
  // Throws invalid_state while profiling is on or when none was recorded.
  std::vector<ProfileEvent> events() const;

  // The profile being recorded (null when off), for ProfiledCall.
  std::shared_ptr<ProfileSession> session() const;

 private:
  std::atomic<bool> enabled_{false};
  mutable std::mutex mutex_;
  std::shared_ptr<ProfileSession> session_;  // the current or the last profile
};

// Records one event from construction to destruction (an exception leaving
// the call included). Build one only when profiler.enabled(). The phase is
// that of the enclosing ProfilePhaseGuard on this thread.
class ProfiledCall {
 public:
  ProfiledCall(const Profiler& profiler, std::string name, Device device, std::span<const Tensor> inputs);
  ~ProfiledCall();
  ProfiledCall(const ProfiledCall&) = delete;
  ProfiledCall& operator=(const ProfiledCall&) = delete;

 private:
  std::shared_ptr<ProfileSession> session_;  // keeps the buffers alive until the event is stored
  ProfiledCall* parent_;                     // the enclosing call on this thread
  ProfileEvent event_;
};

// Op calls on this thread are in `phase` while it lives (the autograd
// engine opens a backward one); guards nest.
class ProfilePhaseGuard {
 public:
  explicit ProfilePhaseGuard(ProfilePhase phase);
  ~ProfilePhaseGuard();
  ProfilePhaseGuard(const ProfilePhaseGuard&) = delete;
  ProfilePhaseGuard& operator=(const ProfilePhaseGuard&) = delete;

 private:
  ProfilePhase previous_;
};

}  // namespace kiln
