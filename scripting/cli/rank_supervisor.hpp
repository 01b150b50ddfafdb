// The ranks of `kiln launch` on this node, from start to the last exit:
// their output copied line by line with "[rank R] " before each line, the
// first failure reported and the other ranks stopped, the launcher's
// SIGINT and SIGTERM forwarded.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace kiln::cli {

struct RankLaunch {
  int rank = 0;                   // the global rank, for the prefix and the messages
  std::string program;            // the executable to run
  std::vector<std::string> argv;  // its arguments, argv[0] first
  std::vector<std::string> env;   // the whole environment, "NAME=value" each
};

// Starts the ranks and returns when every one has ended and its output has
// been copied: 0 when all exited with 0; the failing rank's exit code
// (128 + k for a signal k) when one failed; 128 + k when the launcher got
// signal k (SIGINT or SIGTERM) first. On a failure or a signal the running
// ranks get SIGTERM (or the signal received), then SIGKILL after `stop_grace`.
int supervise_ranks(const std::vector<RankLaunch>& ranks, std::chrono::milliseconds stop_grace);

}  // namespace kiln::cli
