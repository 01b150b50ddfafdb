// Kernel contexts and the two host functions that need one: the CPU thread
// pool and per-call scratch memory.
#include "plugin/kernel_scope.hpp"

#include <type_traits>

#include "guard.hpp"
#include "handles.hpp"

namespace kiln::abi {
namespace {

const char kScopeTag = 0;

}  // namespace

static_assert(std::is_standard_layout_v<TaggedContext>);

KernelScope::KernelScope(kiln_runtime* rt, Device device) : tagged{{}, &kScopeTag, this}, runtime(&rt->runtime) {
  kiln_kernel_context& context = tagged.context;
  context.size = sizeof(kiln_kernel_context);
  context.runtime = rt;
  context.device = kiln_device_type(device.type);
  context.device_index = device.index;
  context.num_threads = runtime->thread_pool().num_workers();
}

KernelScope& KernelScope::of(const kiln_kernel_context* ctx) {
  KILN_CHECK(ctx, Status::invalid_argument, "the kernel context is NULL");
  // The context is the first member of a TaggedContext; the tag confirms it.
  const auto* tagged = reinterpret_cast<const TaggedContext*>(ctx);
  KILN_CHECK(tagged->tag == &kScopeTag, Status::invalid_argument,
             "the kernel context was not made by the host; pass the one the kernel received");
  return *tagged->scope;
}

namespace host {

kiln_status parallel_for(const kiln_kernel_context* ctx, int64_t n, int64_t grain,
                         kiln_status (*fn)(void* user, int64_t begin, int64_t end), void* user) {
  return guarded("parallel_for", [&] {
    KILN_CHECK(fn, Status::invalid_argument, "fn is NULL");
    KILN_CHECK(n >= 0 && grain >= 1, Status::invalid_argument, "n must be >= 0 and grain >= 1, got n ", n,
               " and grain ", grain);
    KernelScope::of(ctx).runtime->thread_pool().parallel_for(n, grain, [&](int64_t begin, int64_t end) {
      const kiln_status status = fn(user, begin, end);
      // The message lives on the thread that ran the chunk: carry it over.
      if (status != KILN_OK) throw_error(Status(status), kiln_last_error());
    });
  });
}

kiln_status workspace(const kiln_kernel_context* ctx, size_t bytes, void** out) {
  return guarded("workspace", [&] {
    KILN_CHECK(out, Status::invalid_argument, "out is NULL");
    KernelScope& scope = KernelScope::of(ctx);
    const Device device{DeviceType(ctx->device), ctx->device_index};
    Tensor block = scope.runtime->empty(Shape{int64_t(bytes)}, DType::u8, device);
    std::lock_guard lock(scope.workspace_mutex);
    scope.workspace.push_back(block);
    *out = block.raw_data();
  });
}

}  // namespace host
}  // namespace kiln::abi
