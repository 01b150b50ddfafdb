// Recording of the per-op profiler (kiln/profiler/profiler.hpp): one event
// buffer per thread and profile, so that threads recording at once never
// wait for each other; the buffers are merged when the events are read.
#include "kiln/profiler/profiler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <utility>

#include "kiln/error.hpp"
#include "kiln/profiler/device_timeline.hpp"
#include "kiln/tensor.hpp"

namespace kiln {

namespace {

struct ThreadBuffer {
  std::thread::id owner;
  int number = 0;
  const char* name = nullptr;
  std::mutex mutex;  // taken by the owner to store, by a reader to copy
  std::vector<ProfileEvent> events;
};

// Profile ids are never reused, so a thread's cached buffer of an earlier
// profile can never be taken for the current one. This counter is shared
// between runtimes but holds no resource.
std::atomic<uint64_t> next_session_id{1};

// This thread's buffer in the profile it last recorded into.
thread_local uint64_t tls_buffer_session = 0;
thread_local ThreadBuffer* tls_buffer = nullptr;

// The innermost profiled call open on this thread, and the phase ops are in.
thread_local ProfiledCall* tls_innermost = nullptr;
thread_local ProfilePhase tls_phase = ProfilePhase::forward;
thread_local const char* tls_thread_name = nullptr;

}  // namespace

// A device's timeline in one profile, with its anchor: a mark the device
// reached at the host time anchor_ns (on the profile's clock), from which
// the times of its other marks are placed. No timeline: the device cannot
// be timed, and its work is not.
struct DeviceClock {
  Device device;
  std::unique_ptr<DeviceTimeline> timeline;
  DeviceTimeline::Mark anchor = 0;
  int64_t anchor_ns = 0;
};

namespace {

// Device work whose marks are not read yet: that waits for the end of the profile.
struct PendingDeviceSpan {
  DeviceClock* clock = nullptr;
  DeviceTimeline::Mark begin = 0;
  DeviceTimeline::Mark end = 0;
  ProfileEvent event;  // all but the times
};

int64_t as_ns(double seconds) { return std::llround(seconds * 1e9); }

}  // namespace

class ProfileSession {
 public:
  explicit ProfileSession(DeviceTimelineFactory make_timeline)
      : id_(next_session_id.fetch_add(1)),
        origin_(std::chrono::steady_clock::now()),
        make_timeline_(std::move(make_timeline)) {}

  ~ProfileSession() {
    for (PendingDeviceSpan& p : pending_) release_marks(p);
    for (const std::unique_ptr<DeviceClock>& clock : clocks_)
      if (clock->timeline) clock->timeline->release(clock->anchor);
  }

  int64_t now_ns() const { return ns_at(std::chrono::steady_clock::now()); }
  int64_t ns_at(std::chrono::steady_clock::time_point t) const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - origin_).count();
  }

  // Out of memory for the event: losing it beats ending the process.
  void store(ProfileEvent&& event) noexcept {
    try {
      ThreadBuffer& buffer = buffer_of_this_thread();
      event.thread = buffer.number;
      std::lock_guard<std::mutex> lock(buffer.mutex);
      buffer.events.push_back(std::move(event));
    } catch (...) {
    }
  }

  std::vector<std::string> thread_names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> names;
    for (const std::unique_ptr<ThreadBuffer>& buffer : buffers_) names.push_back(buffer->name ? buffer->name : "");
    return names;
  }

  // The clock of `device`, made with its anchor on first use; null for the
  // CPU and for a device that cannot be timed.
  DeviceClock* device_clock(Device device) noexcept {
    if (device.is_cpu() || !make_timeline_) return nullptr;
    std::lock_guard<std::mutex> lock(device_mutex_);
    for (const std::unique_ptr<DeviceClock>& clock : clocks_)
      if (clock->device == device) return clock->timeline ? clock.get() : nullptr;
    try {
      clocks_.push_back(std::make_unique<DeviceClock>());
      DeviceClock& clock = *clocks_.back();
      clock.device = device;
      std::unique_ptr<DeviceTimeline> timeline = make_timeline_(device);
      if (!timeline) return nullptr;
      clock.anchor = timeline->mark(timeline->compute_stream());
      if (!clock.anchor) return nullptr;
      timeline->wait(clock.anchor);
      clock.anchor_ns = now_ns();
      clock.timeline = std::move(timeline);
      return &clock;
    } catch (...) {
      return nullptr;  // the profile goes without the device's times
    }
  }

  // Keeps device work to be timed when the profile ends; after that, drops it.
  void store_device_span(PendingDeviceSpan&& span) noexcept {
    std::lock_guard<std::mutex> lock(device_mutex_);
    try {
      if (!resolved_) {
        pending_.push_back(std::move(span));
        return;
      }
    } catch (...) {
    }
    release_marks(span);
  }

  // Waits for the device work of the profile and turns it into spans.
  void resolve_device_spans() noexcept {
    std::lock_guard<std::mutex> lock(device_mutex_);
    resolved_ = true;
    for (PendingDeviceSpan& p : pending_) {
      DeviceTimeline& timeline = *p.clock->timeline;
      timeline.wait(p.end);
      const std::optional<double> begin = timeline.seconds_between(p.clock->anchor, p.begin);
      const std::optional<double> end = timeline.seconds_between(p.clock->anchor, p.end);
      release_marks(p);
      if (!begin || !end) continue;
      p.event.start_ns = p.clock->anchor_ns + as_ns(*begin);
      p.event.end_ns = p.clock->anchor_ns + as_ns(*end);
      try {
        device_events_.push_back(std::move(p.event));
      } catch (...) {
        // Out of memory for the event: the trace goes without it.
      }
    }
    pending_.clear();
  }

  std::vector<ProfileEvent> events() const {
    std::vector<ProfileEvent> all;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::unique_ptr<ThreadBuffer>& buffer : buffers_) {
      std::lock_guard<std::mutex> buffer_lock(buffer->mutex);
      all.insert(all.end(), buffer->events.begin(), buffer->events.end());
    }
    {
      std::lock_guard<std::mutex> device_lock(device_mutex_);
      all.insert(all.end(), device_events_.begin(), device_events_.end());
    }
    // Events are stored when they end; readers want them as they started.
    std::stable_sort(all.begin(), all.end(), [](const ProfileEvent& a, const ProfileEvent& b) {
      return a.thread != b.thread ? a.thread < b.thread : a.start_ns < b.start_ns;
    });
    return all;
  }

 private:
  ThreadBuffer& buffer_of_this_thread() {
    if (tls_buffer_session == id_) return *tls_buffer;
    std::lock_guard<std::mutex> lock(mutex_);
    const std::thread::id self = std::this_thread::get_id();
    auto it = std::find_if(buffers_.begin(), buffers_.end(), [&](const auto& b) { return b->owner == self; });
    if (it == buffers_.end()) {
      buffers_.push_back(std::make_unique<ThreadBuffer>());
      buffers_.back()->owner = self;
      buffers_.back()->number = int(buffers_.size());
      buffers_.back()->name = tls_thread_name;
      it = std::prev(buffers_.end());
    }
    tls_buffer_session = id_;
    tls_buffer = it->get();
    return **it;
  }

  static void release_marks(PendingDeviceSpan& p) noexcept {
    p.clock->timeline->release(p.begin);
    p.clock->timeline->release(p.end);
    p.begin = p.end = 0;
  }

  const uint64_t id_;
  const std::chrono::steady_clock::time_point origin_;
  mutable std::mutex mutex_;  // guards buffers_ (the list, not their events)
  std::vector<std::unique_ptr<ThreadBuffer>> buffers_;

  const DeviceTimelineFactory make_timeline_;
  mutable std::mutex device_mutex_;  // guards what follows
  std::vector<std::unique_ptr<DeviceClock>> clocks_;
  std::vector<PendingDeviceSpan> pending_;
  std::vector<ProfileEvent> device_events_;  // resolved
  bool resolved_ = false;
};

const char* phase_name(ProfilePhase phase) { return phase == ProfilePhase::backward ? "backward" : "forward"; }

Profiler::Profiler() : make_timeline_(make_device_timeline) {}
Profiler::~Profiler() = default;

void Profiler::begin() {
  std::lock_guard<std::mutex> lock(mutex_);
  KILN_CHECK(!enabled(), Status::invalid_state,
             "profiling is already on for this runtime; end it before beginning another profile");
  session_ = std::make_shared<ProfileSession>(make_timeline_);
  enabled_.store(true, std::memory_order_relaxed);
}

void Profiler::end() {
  std::lock_guard<std::mutex> lock(mutex_);
  KILN_CHECK(enabled(), Status::invalid_state, "profiling is not on for this runtime (end without begin)");
  enabled_.store(false, std::memory_order_relaxed);
  session_->resolve_device_spans();
}

void Profiler::set_device_timelines(DeviceTimelineFactory make) {
  std::lock_guard<std::mutex> lock(mutex_);
  make_timeline_ = std::move(make);
}

std::shared_ptr<ProfileSession> Profiler::finished_session() const {
  std::lock_guard<std::mutex> lock(mutex_);
  KILN_CHECK(!enabled(), Status::invalid_state,
             "profiling is still on for this runtime; end it before reading the profile");
  KILN_CHECK(session_ != nullptr, Status::invalid_state,
             "no profile has been recorded on this runtime; begin and end profiling first");
  return session_;
}

std::vector<ProfileEvent> Profiler::events() const { return finished_session()->events(); }

std::vector<std::string> Profiler::thread_names() const { return finished_session()->thread_names(); }

std::shared_ptr<ProfileSession> Profiler::session() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return enabled() ? session_ : nullptr;
}

ProfiledDeviceWork::ProfiledDeviceWork(std::shared_ptr<ProfileSession> session, Device device,
                                       std::optional<StreamId> stream) noexcept
    : session_(std::move(session)) {
  if (!session_ || device.is_cpu()) return;
  clock_ = session_->device_clock(device);
  if (!clock_) return;
  stream_ = stream ? *stream : clock_->timeline->compute_stream();
  begin_ = clock_->timeline->mark(stream_);
  if (!begin_) clock_ = nullptr;
}

void ProfiledDeviceWork::finish(std::string name, ProfilePhase phase, const char* track) noexcept {
  if (!clock_) return;
  PendingDeviceSpan span;
  span.clock = std::exchange(clock_, nullptr);
  span.begin = std::exchange(begin_, 0);
  span.end = span.clock->timeline->mark(stream_);
  try {
    span.event.name = std::move(name);
    span.event.phase = phase;
    span.event.device = span.clock->device;
    span.event.span = true;
    span.event.track = to_string(span.clock->device) + " " + track;
  } catch (...) {
    span.clock->timeline->release(span.begin);
    span.clock->timeline->release(span.end);
    return;
  }
  session_->store_device_span(std::move(span));
}

ProfiledDeviceWork::~ProfiledDeviceWork() {
  if (clock_) clock_->timeline->release(begin_);
}

ProfiledCall::ProfiledCall(const Profiler& profiler, std::string name, Device device, std::span<const Tensor> inputs)
    // A call on the CPU has no device work: it holds no second reference.
    : session_(profiler.session()),
      parent_(tls_innermost),
      device_work_(device.is_cpu() ? nullptr : session_, device, std::nullopt) {
  tls_innermost = this;
  if (!session_) return;  // profiling ended since the caller looked
  event_.name = std::move(name);
  event_.phase = tls_phase;
  event_.device = device;
  if (parent_ && parent_->session_ == session_) event_.depth = parent_->event_.depth + 1;
  event_.input_shapes.reserve(inputs.size());
  for (const Tensor& t : inputs)
    if (t.defined()) event_.input_shapes.push_back(t.shape());
  event_.start_ns = session_->now_ns();
}

ProfiledCall::~ProfiledCall() {
  tls_innermost = parent_;
  if (!session_) return;
  event_.end_ns = session_->now_ns();
  if (!event_.device.is_cpu()) device_work_.finish(event_.name, event_.phase, "compute stream");
  if (parent_ && parent_->session_ == session_) parent_->event_.children_ns += event_.total_ns();
  session_->store(std::move(event_));
}

ProfiledSpan::ProfiledSpan(const Profiler& profiler, std::string track, std::string name)
    : session_(profiler.session()) {
  if (!session_) return;  // profiling ended since the caller looked
  event_.name = std::move(name);
  event_.phase = tls_phase;
  event_.span = true;
  event_.track = std::move(track);
  event_.start_ns = session_->now_ns();
}

ProfiledSpan::~ProfiledSpan() {
  if (!session_) return;
  event_.end_ns = session_->now_ns();
  session_->store(std::move(event_));
}

ProfiledDeviceSpan::ProfiledDeviceSpan(const Profiler& profiler, Device device, StreamId stream, const char* track,
                                       std::string name)
    : work_(profiler.session(), device, stream), track_(track), name_(std::move(name)) {}

ProfiledDeviceSpan::~ProfiledDeviceSpan() { work_.finish(std::move(name_), tls_phase, track_); }

void record_span(const Profiler& profiler, const char* track, const char* name,
                 std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end) noexcept {
  const std::shared_ptr<ProfileSession> session = profiler.session();
  if (!session) return;
  try {
    ProfileEvent event;
    event.name = name;
    event.phase = tls_phase;
    event.span = true;
    event.track = track;
    event.start_ns = session->ns_at(start);
    event.end_ns = session->ns_at(end);
    session->store(std::move(event));
  } catch (...) {
    // Out of memory for the event: the trace goes without it.
  }
}

void name_profiled_thread(const char* name) { tls_thread_name = name; }

ProfilePhaseGuard::ProfilePhaseGuard(ProfilePhase phase) : previous_(tls_phase) { tls_phase = phase; }

ProfilePhaseGuard::~ProfilePhaseGuard() { tls_phase = previous_; }

}  // namespace kiln
