// Recording of the per-op profiler (kiln/profiler/profiler.hpp): one event
// buffer per thread and profile, so that threads recording at once never
// wait for each other; the buffers are merged when the events are read.
#include "kiln/profiler/profiler.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "kiln/error.hpp"
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

class ProfileSession {
 public:
  ProfileSession() : id_(next_session_id.fetch_add(1)), origin_(std::chrono::steady_clock::now()) {}

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

  std::vector<ProfileEvent> events() const {
    std::vector<ProfileEvent> all;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::unique_ptr<ThreadBuffer>& buffer : buffers_) {
      std::lock_guard<std::mutex> buffer_lock(buffer->mutex);
      all.insert(all.end(), buffer->events.begin(), buffer->events.end());
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

  const uint64_t id_;
  const std::chrono::steady_clock::time_point origin_;
  mutable std::mutex mutex_;  // guards buffers_ (the list, not their events)
  std::vector<std::unique_ptr<ThreadBuffer>> buffers_;
};

const char* phase_name(ProfilePhase phase) { return phase == ProfilePhase::backward ? "backward" : "forward"; }

Profiler::Profiler() = default;
Profiler::~Profiler() = default;

void Profiler::begin() {
  std::lock_guard<std::mutex> lock(mutex_);
  KILN_CHECK(!enabled(), Status::invalid_state,
             "profiling is already on for this runtime; end it before beginning another profile");
  session_ = std::make_shared<ProfileSession>();
  enabled_.store(true, std::memory_order_relaxed);
}

void Profiler::end() {
  std::lock_guard<std::mutex> lock(mutex_);
  KILN_CHECK(enabled(), Status::invalid_state, "profiling is not on for this runtime (end without begin)");
  enabled_.store(false, std::memory_order_relaxed);
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

ProfiledCall::ProfiledCall(const Profiler& profiler, std::string name, Device device, std::span<const Tensor> inputs)
    : session_(profiler.session()), parent_(tls_innermost) {
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
