// Loader handles: the C API of the input pipeline over the engine in
// runtime/data.
#include "data/loader.hpp"

#include <algorithm>
#include <cstring>

#include "convert.hpp"
#include "data/example.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "kiln/error.hpp"

using kiln::abi::guarded;

namespace {

kiln::data::LoaderOptions engine_options(const kiln_loader_options& o) {
  kiln::data::LoaderOptions options;
  options.batch_size = o.batch_size;
  options.drop_last = o.drop_last != 0;
  options.shard.shuffle = o.shuffle != 0;
  options.shard.seed = o.seed;
  options.shard.rank = o.rank;
  // 0 and 1 both mean one process; a negative size is left for the engine to refuse.
  options.shard.world_size = o.world_size == 0 ? 1 : o.world_size;
  options.num_workers = o.num_workers;
  options.prefetch = o.prefetch;
  return options;
}

// The caller's options, with fields past its `size` (an older header) left at zero.
kiln_loader_options read_options(const kiln_loader_options* given) {
  kiln::abi::check_struct_size(given->size, "kiln_loader_options");
  kiln_loader_options o{};
  std::memcpy(&o, given, std::min(given->size, sizeof o));
  o.size = sizeof o;
  return o;
}

}  // namespace

extern "C" {

kiln_status kiln_loader_create(kiln_data_source* source, kiln_transform* const* transforms, size_t n_transforms,
                               const kiln_loader_options* options, kiln_loader** out) {
  KILN_REQUIRE(source, options, out);
  if (n_transforms > 0) KILN_REQUIRE(transforms);
  return guarded(__func__, [&] {
    const kiln_loader_options o = read_options(options);
    kiln_runtime* rt = source->object.runtime();
    auto loader = std::make_unique<kiln_loader>();
    loader->source = kiln::abi::DataSourceRef::retain(source);
    for (size_t i = 0; i < n_transforms; ++i) {
      KILN_CHECK(transforms[i], kiln::Status::invalid_argument, "transforms[", i, "] is NULL");
      KILN_CHECK(transforms[i]->object.runtime() == rt, kiln::Status::invalid_argument, "transforms[", i,
                 "] belongs to another runtime than the data source");
      loader->transforms.push_back(kiln::abi::TransformRef::retain(transforms[i]));
    }
    const kiln::Device device = kiln::abi::to_device(o.device, o.device_index);
    rt->runtime.check_device(device);
    kiln_loader* self = loader.get();
    loader->engine = std::make_unique<kiln::data::Loader>(
        source->length, engine_options(o),
        [self](int64_t index, uint64_t seed) {
          return kiln::abi::make_transformed_example(*self->source.get(), self->transforms, index, seed);
        },
        // Batches bound for a GPU are assembled in page-locked memory and
        // copied there by the worker that made them.
        device.is_cpu() ? rt->runtime.allocator(device) : rt->runtime.pinned_allocator(),
        device.is_cpu() ? nullptr : kiln::abi::make_device_stager(rt->runtime, device), &rt->runtime.profiler());
    *out = loader.release();
  });
}

void kiln_loader_retain(kiln_loader* loader) {
  if (loader) loader->refs.fetch_add(1, std::memory_order_relaxed);
}

void kiln_loader_release(kiln_loader* loader) {
  if (loader && loader->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete loader;
}

kiln_status kiln_loader_length(const kiln_loader* loader, int64_t* num_examples, int64_t* num_batches) {
  KILN_REQUIRE(loader);
  if (num_examples) *num_examples = loader->engine->shard_examples();
  if (num_batches) *num_batches = loader->engine->num_batches();
  return KILN_OK;
}

kiln_status kiln_loader_start_epoch(kiln_loader* loader, int64_t epoch) {
  KILN_REQUIRE(loader);
  return guarded(__func__, [&] { loader->engine->start_epoch(epoch); });
}

kiln_status kiln_loader_start_epoch_at(kiln_loader* loader, int64_t epoch, int64_t first_batch) {
  KILN_REQUIRE(loader);
  return guarded(__func__, [&] { loader->engine->start_epoch(epoch, first_batch); });
}

kiln_status kiln_loader_next(kiln_loader* loader, kiln_example** out) {
  KILN_REQUIRE(loader, out);
  return guarded(__func__, [&] {
    std::optional<kiln::data::NamedTensors> batch = loader->engine->next();
    *out = batch ? kiln::abi::deliver_batch(loader->source->object.runtime(), std::move(*batch)) : nullptr;
  });
}

kiln_status kiln_loader_stats_get(const kiln_loader* loader, kiln_loader_stats* out) {
  KILN_REQUIRE(loader, out);
  return guarded(__func__, [&] {
    kiln::abi::check_struct_size(out->size, "kiln_loader_stats");
    const kiln::data::LoaderStats s = loader->engine->stats();
    if (KILN_HAS_FIELD(out, batches)) out->batches = s.batches;
    if (KILN_HAS_FIELD(out, last_wait_seconds)) out->last_wait_seconds = s.last_wait_seconds;
    if (KILN_HAS_FIELD(out, total_wait_seconds)) out->total_wait_seconds = s.total_wait_seconds;
    if (KILN_HAS_FIELD(out, max_ready)) out->max_ready = s.max_ready;
    if (KILN_HAS_FIELD(out, device_wait_seconds)) out->device_wait_seconds = s.device_wait_seconds;
  });
}

}  // extern "C"
