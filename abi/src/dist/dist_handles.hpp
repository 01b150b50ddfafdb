// The handles of distributed training: a process group and an operation in
// flight. A group does not hold its runtime: it moves tensors, whoever made
// them, and the runtime's default group is released with the runtime.
#pragma once

#include <atomic>
#include <memory>

#include "kiln/dist/process_group.hpp"
#include "kiln/kiln.h"

struct kiln_process_group {
  explicit kiln_process_group(std::unique_ptr<kiln::dist::ProcessGroup> g) : group(std::move(g)) {}
  std::atomic<int64_t> refs{1};
  std::unique_ptr<kiln::dist::ProcessGroup> group;
};

struct kiln_work {
  explicit kiln_work(std::shared_ptr<kiln::dist::Work> w) : work(std::move(w)) {}
  std::shared_ptr<kiln::dist::Work> work;
};

namespace kiln::abi {

// The runtime's default group (made from the environment on first use), as
// a borrowed pointer that lives as long as the runtime.
kiln_process_group* default_process_group(kiln_runtime* rt);

}  // namespace kiln::abi
