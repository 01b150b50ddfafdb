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
//
// Besides op calls, a profile holds spans: named stretches of time that are
// not ops (a training step, its input wait, a loader worker making a batch,
// a collective), for traces. A span is on its thread's track or on a named
// track of its own ("collectives"); it encloses no op's time and is in no
// table.
//
// Work on a GPU is also timed as the GPU sees it: each op call on a GPU
// records marks on its compute stream (kiln/profiler/device_timeline.hpp),
// and so do the loader's input copies on their copy stream. When profiling
// ends, the profiler waits for those marks and adds one span per op call
// on the track "cuda:<n> compute stream" and one per batch on "cuda:<n>
// copy stream", placed on the host's clock through a mark that the GPU
// reached at a known host time when the profile first used it (so they are
// off by the few microseconds a synchronisation takes).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/device.hpp"
#include "kiln/memory/segment_backend.hpp"
#include "kiln/shape.hpp"

namespace kiln {

class Tensor;
class DeviceTimeline;

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
  bool span = false;   // a span (ProfiledSpan), not an op call
  std::string track;   // a span's own track; empty: the recording thread's

  int64_t total_ns() const { return end_ns - start_ns; }
  int64_t self_ns() const { return total_ns() - children_ns; }
};

class ProfileSession;
struct DeviceClock;

// How a profile times a device's work: make_device_timeline unless a test
// gives a fake.
using DeviceTimelineFactory = std::function<std::unique_ptr<DeviceTimeline>(Device)>;

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
  // Stops recording; waits for the device work that profiled calls queued,
  // to time it. Throws invalid_state when profiling is off.
  void end();
  // Replaces how the next profiles time device work.
  void set_device_timelines(DeviceTimelineFactory make);
  // The events of the last finished profile, ordered by thread, then start.
  // Throws invalid_state while profiling is on or when none was recorded.
  std::vector<ProfileEvent> events() const;

  // The names of the threads of the last finished profile, by thread
  // number (thread 1 first); "" for a thread that gave none. Same states as
  // events().
  std::vector<std::string> thread_names() const;

  // The profile being recorded (null when off), for ProfiledCall and ProfiledSpan.
  std::shared_ptr<ProfileSession> session() const;

 private:
  std::shared_ptr<ProfileSession> finished_session() const;

  std::atomic<bool> enabled_{false};
  mutable std::mutex mutex_;
  DeviceTimelineFactory make_timeline_;
  std::shared_ptr<ProfileSession> session_;  // the current or the last profile
};

// The device side of a span: marks on a stream of a GPU around the work
// queued there while it lives, resolved into a span on the track
// "<device> <track>" when profiling ends. Nothing on the CPU.
class ProfiledDeviceWork {
 public:
  // `stream` nullopt: the device's compute stream.
  ProfiledDeviceWork(std::shared_ptr<ProfileSession> session, Device device, std::optional<StreamId> stream) noexcept;
  // Records the end mark and hands the span to the profile.
  void finish(std::string name, ProfilePhase phase, const char* track) noexcept;
  ~ProfiledDeviceWork();
  ProfiledDeviceWork(const ProfiledDeviceWork&) = delete;
  ProfiledDeviceWork& operator=(const ProfiledDeviceWork&) = delete;

 private:
  std::shared_ptr<ProfileSession> session_;
  DeviceClock* clock_ = nullptr;  // null: nothing to time
  StreamId stream_ = 0;
  uintptr_t begin_ = 0;
};

// Records one event from construction to destruction (an exception leaving
// the call included), and on a GPU the device's time for the work it
// queued. Build one only when profiler.enabled(). The phase is that of the
// enclosing ProfilePhaseGuard on this thread.
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
  ProfiledDeviceWork device_work_;
};

// Records a span from construction to destruction, on this thread's track
// or, when `track` is not empty, on the track of that name. Build one only
// when profiler.enabled(), so that naming it costs nothing otherwise.
class ProfiledSpan {
 public:
  ProfiledSpan(const Profiler& profiler, std::string track, std::string name);
  ~ProfiledSpan();
  ProfiledSpan(const ProfiledSpan&) = delete;
  ProfiledSpan& operator=(const ProfiledSpan&) = delete;

 private:
  std::shared_ptr<ProfileSession> session_;
  ProfileEvent event_;
};

// The device's time for the work queued on `stream` of `device` while it
// lives, as a span named `name` on the track "<device> <track>" ("cuda:0
// copy stream"). Build one only when profiler.enabled(); nothing on the CPU.
class ProfiledDeviceSpan {
 public:
  ProfiledDeviceSpan(const Profiler& profiler, Device device, StreamId stream, const char* track, std::string name);
  ~ProfiledDeviceSpan();
  ProfiledDeviceSpan(const ProfiledDeviceSpan&) = delete;
  ProfiledDeviceSpan& operator=(const ProfiledDeviceSpan&) = delete;

 private:
  ProfiledDeviceWork work_;
  const char* track_;
  std::string name_;
};

// Records a span that has ended, from `start` to `end`, when `profiler`
// records (nothing otherwise): for time measured anyway, as a training
// step's phases are. `track` "" is the calling thread's.
void record_span(const Profiler& profiler, const char* track, const char* name,
                 std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end) noexcept;

// Names the calling thread's track in traces ("loader worker"); `name` must
// outlive the thread (a string literal). Threads without one are shown as
// "thread <n>".
void name_profiled_thread(const char* name);

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
