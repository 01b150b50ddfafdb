// Runtime handles: creation from versioned options (with the default
// plugins), reference counting, seeding, memory statistics and the GPU
// memory cache.
#include "convert.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "kiln/memory/cpu_allocator.hpp"

using kiln::abi::guarded;

// The version numbers as string literals (two steps, so the macros expand first).
#define KILN_TEXT_(x) #x
#define KILN_TEXT(x) KILN_TEXT_(x)

extern "C" {

const char* kiln_version(void) {
  return KILN_TEXT(KILN_VERSION_MAJOR) "." KILN_TEXT(KILN_VERSION_MINOR) "." KILN_TEXT(KILN_VERSION_PATCH);
}

kiln_status kiln_runtime_create(const kiln_runtime_options* options, kiln_runtime** out) {
  KILN_REQUIRE(out);
  return guarded(__func__, [&] {
    kiln::RuntimeOptions opts;
    kiln::abi::LogSink log;
    if (options) {
      kiln::abi::check_struct_size(options->size, "kiln_runtime_options");
      if (KILN_HAS_FIELD(options, num_threads)) opts.num_threads = options->num_threads;
      if (KILN_HAS_FIELD(options, seed)) opts.seed = options->seed;
      if (KILN_HAS_FIELD(options, allow_tf32)) opts.allow_tf32 = options->allow_tf32 != 0;
      if (KILN_HAS_FIELD(options, direct_convolutions)) opts.direct_convolutions = options->direct_convolutions != 0;
      if (KILN_HAS_FIELD(options, log_verbose))
        log = kiln::abi::LogSink(options->log, options->log_user_data, options->log_verbose != 0);
    }
    std::unique_ptr<kiln_runtime> rt(new kiln_runtime(opts));
    rt->log = log;
    rt->plugins.load_defaults(options);
    *out = rt.release();
  });
}

void kiln_runtime_retain(kiln_runtime* rt) {
  if (rt) rt->refs.fetch_add(1, std::memory_order_relaxed);
}

void kiln_runtime_release(kiln_runtime* rt) {
  if (rt && rt->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete rt;
}

kiln_status kiln_manual_seed(kiln_runtime* rt, uint64_t seed) {
  KILN_REQUIRE(rt);
  return guarded(__func__, [&] { rt->runtime.manual_seed(seed); });
}

kiln_status kiln_memory_stats_get(kiln_runtime* rt, kiln_device_type device, int device_index,
                                  kiln_memory_stats* out) {
  KILN_REQUIRE(rt, out);
  return guarded(__func__, [&] {
    kiln::abi::check_struct_size(out->size, "kiln_memory_stats");
    const kiln::MemoryStats s = rt->runtime.allocator(kiln::abi::to_device(device, device_index))->stats();
    if (KILN_HAS_FIELD(out, current_bytes)) out->current_bytes = s.current_bytes;
    if (KILN_HAS_FIELD(out, peak_bytes)) out->peak_bytes = s.peak_bytes;
    if (KILN_HAS_FIELD(out, reserved_bytes)) out->reserved_bytes = s.reserved_bytes;
    if (KILN_HAS_FIELD(out, num_allocs)) out->num_allocs = s.num_allocs;
    if (KILN_HAS_FIELD(out, num_frees)) out->num_frees = s.num_frees;
    if (KILN_HAS_FIELD(out, active_bytes)) out->active_bytes = s.active_bytes;
    if (KILN_HAS_FIELD(out, cached_free_bytes)) out->cached_free_bytes = s.cached_free_bytes;
    if (KILN_HAS_FIELD(out, largest_free_block)) out->largest_free_block = s.largest_free_block;
    if (KILN_HAS_FIELD(out, num_reserves)) out->num_reserves = s.num_reserves;
    if (KILN_HAS_FIELD(out, num_releases)) out->num_releases = s.num_releases;
    if (KILN_HAS_FIELD(out, cache_hits)) out->cache_hits = s.cache_hits;
    if (KILN_HAS_FIELD(out, num_cache_flushes)) out->num_cache_flushes = s.num_cache_flushes;
    if (KILN_HAS_FIELD(out, limit_bytes)) out->limit_bytes = s.limit_bytes;
    if (KILN_HAS_FIELD(out, fragmentation)) out->fragmentation = s.fragmentation;
  });
}

kiln_status kiln_memory_empty_cache(kiln_runtime* rt, kiln_device_type device, int device_index) {
  KILN_REQUIRE(rt);
  return guarded(__func__, [&] { rt->runtime.allocator(kiln::abi::to_device(device, device_index))->empty_cache(); });
}

kiln_status kiln_memory_set_limit(kiln_runtime* rt, kiln_device_type device, int device_index, int64_t limit_bytes) {
  KILN_REQUIRE(rt);
  return guarded(__func__, [&] {
    const kiln::Device where = kiln::abi::to_device(device, device_index);
    KILN_CHECK(limit_bytes >= 0, kiln::Status::invalid_argument, "limit_bytes is ", limit_bytes,
               "; expected a number of bytes, or 0 for no cap");
    auto* cpu = dynamic_cast<kiln::CpuAllocator*>(rt->runtime.allocator(where).get());
    KILN_CHECK(cpu, kiln::Status::unsupported, "the memory of ", kiln::to_string(where),
               " is capped when the runtime starts (KILN_CUDA_MEMORY_FRACTION), not by kiln_memory_set_limit");
    cpu->set_limit(limit_bytes);
  });
}

kiln_status kiln_memory_reset_peak(kiln_runtime* rt, kiln_device_type device, int device_index) {
  KILN_REQUIRE(rt);
  return guarded(__func__, [&] { rt->runtime.allocator(kiln::abi::to_device(device, device_index))->reset_peak(); });
}

}  // extern "C"
