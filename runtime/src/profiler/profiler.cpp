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

}  // namespace

class ProfileSession {
 public:
  ProfileSession() : id_(next_session_id.fetch_add(1)), origin_(std::chrono::steady_clock::now()) {}

  int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin_).count();
  }

  void store(ProfileEvent&& event) {
    ThreadBuffer& buffer = buffer_of_this_thread();
    event.thread = buffer.number;
    std::lock_guard<std::mutex> lock(buffer.mutex);
    buffer.events.push_back(std::move(event));
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

std::vector<ProfileEvent> Profiler::events() const {
  std::shared_ptr<ProfileSession> session;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    KILN_CHECK(!enabled(), Status::invalid_state,
               "profiling is still on for this runtime; end it before reading the profile");
    KILN_CHECK(session_ != nullptr, Status::invalid_state,
               "no profile has been recorded on this runtime; begin and end profiling first");
    session = session_;
  }
  return session->events();
}

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
  // Out of memory for the event: losing it beats ending the process.
  try {
    session_->store(std::move(event_));
  } catch (...) {
  }
}

ProfilePhaseGuard::ProfilePhaseGuard(ProfilePhase phase) : previous_(tls_phase) { tls_phase = phase; }

ProfilePhaseGuard::~ProfilePhaseGuard() { tls_phase = previous_; }

}  // namespace kiln
