// What a plugin kernel runs with: the kiln_kernel_context it sees, and behind
// it the runtime and the scratch memory of this one call (host->workspace),
// freed when the kernel returns.
#pragma once

#include <mutex>
#include <vector>

#include "kiln/kiln_plugin.h"
#include "kiln/runtime.hpp"

namespace kiln::abi {

struct KernelScope;

// The context a kernel sees, first in a plain struct, so that the pointer the
// kernel hands back leads to its scope; `tag` tells it from a context the
// plugin made up itself.
struct TaggedContext {
  kiln_kernel_context context;
  const void* tag;
  KernelScope* scope;
};

struct KernelScope {
  KernelScope(kiln_runtime* rt, Device device);
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

  const kiln_kernel_context* context() const { return &tagged.context; }

  TaggedContext tagged;
  Runtime* runtime;
  std::mutex workspace_mutex;  // kernels may ask from several parallel_for chunks
  std::vector<Tensor> workspace;

  // The scope behind `ctx`; throws invalid_argument when the host did not make it.
  static KernelScope& of(const kiln_kernel_context* ctx);
};

namespace host {

kiln_status parallel_for(const kiln_kernel_context* ctx, int64_t n, int64_t grain,
                         kiln_status (*fn)(void* user, int64_t begin, int64_t end), void* user);
kiln_status workspace(const kiln_kernel_context* ctx, size_t bytes, void** out);

}  // namespace host
}  // namespace kiln::abi
