// When a collective fails, the error a backend raises rarely says which
// rank is at fault ("Connection reset by peer", "Timed out waiting 30000ms").
// The store knows more: its server saw which ranks' processes went away,
// and the ranks still alive can say there that they are waiting. This turns
// a backend's failure into kiln's error naming the operation and the rank.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include "kiln/dist/process_group.hpp"
#include "kiln/error.hpp"

namespace kiln::dist {

// What failed: `what` describes the operation ("all_reduce (sum, f32[10])");
// a collective has its number `seq`, a send or recv its `peer`.
struct FailedOperation {
  std::string what;
  std::optional<uint32_t> seq;
  std::optional<int> peer;
};

// Status::peer when a rank left, Status::timeout when ranks are alive but
// did not take part (for a send or recv: the peer did not).
Error blame_failure(Store& store, const ProcessGroupOptions& options, const std::string& prefix,
                    const FailedOperation& op, const std::exception& failure);

// True when a backend's message says it gave up waiting.
bool says_timed_out(const std::string& message);

}  // namespace kiln::dist
