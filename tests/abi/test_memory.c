/* Memory statistics and the GPU memory cache through the C API: the
 * caching allocators' fields (the CPU's cache of large blocks, the GPU's),
 * a caller with an older (shorter) struct, kiln_memory_empty_cache and its
 * bad arguments, resetting the peak, and the CPU cap (kiln_memory_set_limit). The GPU part is skipped, with the reason
 * printed, where no GPU is present. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

static kiln_memory_stats read_stats(kiln_runtime* rt, kiln_device_type device) {
  kiln_memory_stats stats;
  memset(&stats, 0xff, sizeof stats); /* every field the call skips stays visibly unset */
  stats.size = sizeof stats;
  CHECK_OK(kiln_memory_stats_get(rt, device, 0, &stats));
  return stats;
}

/* CPU blocks of 32 KiB or more are kept when freed and serve the next
 * request of their size; kiln_memory_empty_cache gives them back. Smaller
 * ones go back to malloc at once. */
static void cpu_cache(kiln_runtime* rt) {
  const int64_t large[1] = {1 << 16}, small[1] = {1000}; /* 256 KiB and 4000 bytes of f32 */
  kiln_tensor* t = NULL;
  kiln_memory_stats before, stats;
  CHECK_OK(kiln_memory_empty_cache(rt, KILN_DEVICE_CPU, 0));
  before = read_stats(rt, KILN_DEVICE_CPU);
  CHECK(before.cached_free_bytes == 0 && before.largest_free_block == 0 && before.fragmentation == 0.0);
  CHECK(before.active_bytes == before.reserved_bytes && before.limit_bytes == 0);

  CHECK_OK(kiln_tensor_empty(rt, large, 1, KILN_F32, KILN_DEVICE_CPU, 0, &t));
  kiln_tensor_release(t);
  stats = read_stats(rt, KILN_DEVICE_CPU);
  CHECK(stats.cached_free_bytes == 1 << 18 && stats.largest_free_block == 1 << 18);
  CHECK(stats.reserved_bytes == before.reserved_bytes + (1 << 18) && stats.num_reserves == before.num_reserves + 1);
  CHECK(stats.current_bytes == before.current_bytes && stats.active_bytes == before.active_bytes);

  CHECK_OK(kiln_tensor_empty(rt, large, 1, KILN_F32, KILN_DEVICE_CPU, 0, &t)); /* served by the cached block */
  stats = read_stats(rt, KILN_DEVICE_CPU);
  CHECK(stats.cache_hits == before.cache_hits + 1 && stats.num_reserves == before.num_reserves + 1);
  CHECK(stats.cached_free_bytes == 0 && stats.active_bytes == stats.reserved_bytes);
  kiln_tensor_release(t);

  CHECK_OK(kiln_memory_empty_cache(rt, KILN_DEVICE_CPU, 0));
  stats = read_stats(rt, KILN_DEVICE_CPU);
  CHECK(stats.cached_free_bytes == 0 && stats.reserved_bytes == before.reserved_bytes);
  CHECK(stats.num_releases == before.num_releases + 1);

  CHECK_OK(kiln_tensor_empty(rt, small, 1, KILN_F32, KILN_DEVICE_CPU, 0, &t));
  kiln_tensor_release(t);
  stats = read_stats(rt, KILN_DEVICE_CPU);
  CHECK(stats.cached_free_bytes == 0 && stats.reserved_bytes == before.reserved_bytes);
}

static void older_struct_gets_only_its_fields(kiln_runtime* rt) {
  kiln_memory_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.size = offsetof(kiln_memory_stats, active_bytes);
  stats.num_reserves = 42;
  stats.fragmentation = 0.5;
  CHECK_OK(kiln_memory_stats_get(rt, KILN_DEVICE_CPU, 0, &stats));
  CHECK(stats.num_allocs >= 1);
  CHECK(stats.num_reserves == 42 && stats.fragmentation == 0.5);
}

static void empty_cache_bad_arguments(kiln_runtime* rt) {
  CHECK_ERROR(kiln_memory_empty_cache(NULL, KILN_DEVICE_CPU, 0), KILN_ERR_INVALID_ARGUMENT, "kiln_memory_empty_cache",
              "'rt'");
  CHECK_ERROR(kiln_memory_empty_cache(rt, KILN_DEVICE_CUDA, 99), KILN_ERR_DEVICE_MISMATCH, "cuda:99");
  CHECK_ERROR(kiln_memory_empty_cache(rt, (kiln_device_type)7, 0), KILN_ERR_INVALID_ARGUMENT, "unknown device type value 7");
}

static void peak_starts_again_from_current(kiln_runtime* rt) {
  const int64_t big[1] = {1 << 20}, small[1] = {1000};
  kiln_tensor *held = NULL, *gone = NULL;
  kiln_memory_stats stats;
  CHECK_OK(kiln_tensor_empty(rt, small, 1, KILN_F32, KILN_DEVICE_CPU, 0, &held));
  CHECK_OK(kiln_tensor_empty(rt, big, 1, KILN_F32, KILN_DEVICE_CPU, 0, &gone));
  kiln_tensor_release(gone);
  stats = read_stats(rt, KILN_DEVICE_CPU);
  CHECK(stats.peak_bytes >= stats.current_bytes + (4 << 20));
  CHECK_OK(kiln_memory_reset_peak(rt, KILN_DEVICE_CPU, 0));
  stats = read_stats(rt, KILN_DEVICE_CPU);
  CHECK(stats.peak_bytes == stats.current_bytes && stats.current_bytes >= 4000);
  kiln_tensor_release(held);
  CHECK_ERROR(kiln_memory_reset_peak(NULL, KILN_DEVICE_CPU, 0), KILN_ERR_INVALID_ARGUMENT, "kiln_memory_reset_peak",
              "'rt'");
  CHECK_ERROR(kiln_memory_reset_peak(rt, KILN_DEVICE_CUDA, 99), KILN_ERR_DEVICE_MISMATCH, "cuda:99");
}

/* Over the cap: an out-of-memory error naming it, nothing held by the
 * failed request; without the cap the same request succeeds. */
static void cpu_cap(kiln_runtime* rt) {
  const int64_t shape[1] = {1 << 18}; /* 1 MiB */
  kiln_tensor* t = NULL;
  kiln_memory_stats before, stats;
  before = read_stats(rt, KILN_DEVICE_CPU);
  CHECK_OK(kiln_memory_set_limit(rt, KILN_DEVICE_CPU, 0, before.current_bytes + 4096));
  stats = read_stats(rt, KILN_DEVICE_CPU);
  CHECK(stats.limit_bytes == before.current_bytes + 4096);
  CHECK_ERROR(kiln_tensor_empty(rt, shape, 1, KILN_F32, KILN_DEVICE_CPU, 0, &t), KILN_ERR_OUT_OF_MEMORY,
              "cpu: out of memory allocating 1048576 bytes: over the cap of");
  CHECK(t == NULL);
  stats = read_stats(rt, KILN_DEVICE_CPU);
  CHECK(stats.current_bytes == before.current_bytes);
  CHECK_OK(kiln_memory_set_limit(rt, KILN_DEVICE_CPU, 0, 0));
  CHECK_OK(kiln_tensor_empty(rt, shape, 1, KILN_F32, KILN_DEVICE_CPU, 0, &t));
  CHECK(t != NULL && read_stats(rt, KILN_DEVICE_CPU).limit_bytes == 0);
  kiln_tensor_release(t);
  CHECK_ERROR(kiln_memory_set_limit(rt, KILN_DEVICE_CPU, 0, -1), KILN_ERR_INVALID_ARGUMENT, "limit_bytes is -1");
  CHECK_ERROR(kiln_memory_set_limit(NULL, KILN_DEVICE_CPU, 0, 0), KILN_ERR_INVALID_ARGUMENT, "kiln_memory_set_limit",
              "'rt'");
}

static void gpu_cap_is_set_at_start(kiln_runtime* rt) {
  int cuda_count = 0;
  const char* reason = NULL;
  CHECK_OK(kiln_devices_get(rt, &cuda_count, &reason));
  if (cuda_count == 0) {
    CHECK_ERROR(kiln_memory_set_limit(rt, KILN_DEVICE_CUDA, 0, 1 << 20), KILN_ERR_DEVICE_MISMATCH, "cuda:0");
    printf("GPU cap check skipped: no GPU: %s\n", reason);
    return;
  }
  CHECK_ERROR(kiln_memory_set_limit(rt, KILN_DEVICE_CUDA, 0, 1 << 20), KILN_ERR_UNSUPPORTED,
              "KILN_CUDA_MEMORY_FRACTION");
}

static void gpu_cache(kiln_runtime* rt) {
  const int64_t shape[1] = {1 << 20}; /* 4 MiB: one 20 MiB segment */
  kiln_tensor* t = NULL;
  kiln_memory_stats stats;
  int cuda_count = 0;
  const char* reason = NULL;
  CHECK_OK(kiln_devices_get(rt, &cuda_count, &reason));
  if (cuda_count == 0) {
    printf("GPU cache checks skipped: no GPU: %s\n", reason);
    return;
  }
  CHECK_OK(kiln_tensor_empty(rt, shape, 1, KILN_F32, KILN_DEVICE_CUDA, 0, &t));
  stats = read_stats(rt, KILN_DEVICE_CUDA);
  CHECK(stats.current_bytes == 4 << 20 && stats.active_bytes == 4 << 20);
  CHECK(stats.reserved_bytes == 20 << 20 && stats.num_reserves == 1);
  CHECK(stats.cached_free_bytes == 16 << 20 && stats.largest_free_block == 16 << 20);
  kiln_tensor_release(t);
  stats = read_stats(rt, KILN_DEVICE_CUDA);
  CHECK(stats.current_bytes == 0 && stats.reserved_bytes == 20 << 20 && stats.fragmentation == 0.0);
  CHECK_OK(kiln_memory_empty_cache(rt, KILN_DEVICE_CUDA, 0));
  stats = read_stats(rt, KILN_DEVICE_CUDA);
  CHECK(stats.reserved_bytes == 0 && stats.num_releases == 1);
}

int main(void) {
  kiln_runtime_options options;
  kiln_runtime* rt = NULL;
  memset(&options, 0, sizeof options);
  options.size = sizeof options;
  options.num_threads = 1;
  options.skip_default_plugins = 1;
  if (kiln_runtime_create(&options, &rt) != KILN_OK) {
    fprintf(stderr, "setup failed: %s\n", kiln_last_error());
    return 1;
  }
  cpu_cache(rt);
  older_struct_gets_only_its_fields(rt);
  empty_cache_bad_arguments(rt);
  peak_starts_again_from_current(rt);
  cpu_cap(rt);
  gpu_cap_is_set_at_start(rt);
  gpu_cache(rt);
  kiln_runtime_release(rt);
  return check_report("memory");
}
