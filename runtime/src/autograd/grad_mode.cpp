#include "kiln/autograd/grad_mode.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "kiln/runtime.hpp"

namespace kiln {
namespace {

// Runtimes whose grad mode is off on this thread. Usually empty or tiny, so a
// linear scan is faster than any map.
thread_local std::vector<uint64_t> tls_disabled;

}  // namespace

bool grad_enabled(uint64_t runtime_id) {
  return tls_disabled.empty() || std::find(tls_disabled.begin(), tls_disabled.end(), runtime_id) == tls_disabled.end();
}

void set_grad_enabled(uint64_t runtime_id, bool enabled) {
  auto it = std::find(tls_disabled.begin(), tls_disabled.end(), runtime_id);
  if (enabled && it != tls_disabled.end()) tls_disabled.erase(it);
  if (!enabled && it == tls_disabled.end()) tls_disabled.push_back(runtime_id);
}

GradModeGuard::GradModeGuard(const Runtime& rt, bool enabled)
    : runtime_id_(rt.id()), previous_(grad_enabled(rt.id())) {
  set_grad_enabled(runtime_id_, enabled);
}

GradModeGuard::~GradModeGuard() { set_grad_enabled(runtime_id_, previous_); }

}  // namespace kiln
