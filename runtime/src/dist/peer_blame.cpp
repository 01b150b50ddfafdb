#include "peer_blame.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace kiln::dist {
namespace {

// How long a failing rank looks for evidence before it reports.
constexpr auto kDepartureGrace = std::chrono::seconds(1);
constexpr auto kWaitingGrace = std::chrono::seconds(2);
constexpr auto kPoll = std::chrono::milliseconds(20);

std::string ranks_phrase(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) s += str_cat(i ? ", " : "", ranks[i]);
  return s;
}

// Ranks that destroyed their group (said so in the store) while this one still used it.
std::vector<int> ranks_that_left(Store& store, const ProcessGroupOptions& o, const std::string& prefix) {
  std::vector<int> left;
  for (int r = 0; r < o.world_size; ++r) {
    if (r != o.rank && store.try_get(str_cat(prefix, "left/", r))) left.push_back(r);
  }
  return left;
}

// Says in the store that this rank waits in collective `seq`, then gives the
// others a moment to say the same: those that never do did not join.
std::vector<int> ranks_not_waiting(Store& store, const ProcessGroupOptions& o, const std::string& prefix,
                                   uint32_t seq) {
  const std::string key = str_cat(prefix, "waiting/", seq, "/");
  store.set(str_cat(key, o.rank), "1");
  std::vector<int> missing;
  auto deadline = std::chrono::steady_clock::now() + kWaitingGrace;
  do {
    missing.clear();
    for (int r = 0; r < o.world_size; ++r) {
      if (!store.try_get(str_cat(key, r))) missing.push_back(r);
    }
    if (missing.empty()) break;
    std::this_thread::sleep_for(kPoll);
  } while (std::chrono::steady_clock::now() < deadline);
  return missing;
}

// The ranks among `ranks` that can explain the failure: for a send or recv
// only its peer (another rank may time out on its own, end or destroy its
// group before this one reports, and is not why this transfer failed); for
// a collective every rank.
std::vector<int> concerning(std::vector<int> ranks, const std::optional<int>& peer) {
  if (peer) std::erase_if(ranks, [&](int r) { return r != *peer; });
  return ranks;
}

}  // namespace

bool says_timed_out(const std::string& message) {
  std::string lower(message);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return lower.find("timed out") != std::string::npos || lower.find("timeout") != std::string::npos;
}

Error blame_failure(Store& store, const ProcessGroupOptions& o, const std::string& prefix,
                    const FailedOperation& failed, const std::exception& failure) {
  const std::optional<uint32_t> seq = failed.seq;
  const std::string op = seq ? str_cat(failed.what, " #", *seq, " on rank ", o.rank)
                             : str_cat(failed.what, " on rank ", o.rank);
  const std::string said = str_cat(o.backend, " said: ", failure.what());
  const bool timed_out = says_timed_out(failure.what());
  try {
    std::vector<int> departed = concerning(store.departed_ranks(), failed.peer);
    auto deadline = std::chrono::steady_clock::now() + kDepartureGrace;
    // A connection reset usually reaches the backend a moment before the
    // store's server notices the process is gone.
    while (departed.empty() && !timed_out && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(kPoll);
      departed = concerning(store.departed_ranks(), failed.peer);
    }
    if (!departed.empty()) {
      return Error(Status::peer, str_cat(op, ": ", ranks_phrase(departed), " left the job (",
                                         departed.size() == 1 ? "its process" : "their processes", " ended); ",
                                         said));
    }
    std::vector<int> left = concerning(ranks_that_left(store, o, prefix), failed.peer);
    if (!left.empty()) {
      return Error(Status::peer, str_cat(op, ": ", ranks_phrase(left), " destroyed the process group before "
                                         "taking part; ", said));
    }
    if (timed_out && seq) {
      std::vector<int> missing = ranks_not_waiting(store, o, prefix, *seq);
      if (!missing.empty()) {
        return Error(Status::timeout, str_cat(op, ": timed out after ", o.timeout.count(), " ms: ",
                                              ranks_phrase(missing), " did not join it; ", said));
      }
    }
    if (timed_out && failed.peer) {
      // Alive (it has not left), but it never took its side of the transfer.
      return Error(Status::timeout, str_cat(op, ": timed out after ", o.timeout.count(), " ms: rank ", *failed.peer,
                                            " did not take part; ", said));
    }
  } catch (const std::exception& e) {
    // Rank 0 serves the store: when the store is gone, so is rank 0.
    return Error(Status::peer, str_cat(op, ": rank 0 left the job (the store it served is unreachable: ", e.what(),
                                       "); ", said));
  }
  return Error(timed_out ? Status::timeout : Status::peer, str_cat(op, " failed; ", said));
}

}  // namespace kiln::dist
