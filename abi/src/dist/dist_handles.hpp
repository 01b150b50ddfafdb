// The handles of distributed training: a process group and an operation in
// flight. A group moves tensors, whoever made them; a group made by
// kiln_process_group_create holds its runtime, whose profiler traces its
// collectives; the runtime's default group cannot (the runtime holds it),
// and stops tracing when the runtime goes.
#pragma once

#include <atomic>
#include <memory>

#include "kiln/dist/process_group.hpp"
#include "kiln/kiln.h"

struct kiln_process_group {
  // `owner`: the runtime to hold (retained here), or null for the default group.
  kiln_process_group(std::unique_ptr<kiln::dist::ProcessGroup> g, kiln_runtime* owner)
      : group(std::move(g)), runtime(owner) {
    if (runtime) kiln_runtime_retain(runtime);
  }
  ~kiln_process_group() {
    group.reset();  // first: it traces into the runtime's profiler
    kiln_runtime_release(runtime);
  }
  kiln_process_group(const kiln_process_group&) = delete;
  kiln_process_group& operator=(const kiln_process_group&) = delete;

  std::atomic<int64_t> refs{1};
  std::unique_ptr<kiln::dist::ProcessGroup> group;
  kiln_runtime* runtime;
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
