// kiln::Loader: a reference on a kiln_loader (copies share it), which turns
// a data source into batches: seeded shuffles, shards, worker threads,
// prefetch, and resuming an epoch at a batch.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "data.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "kiln/kiln.h"
#include "runtime.hpp"

namespace kiln {

// kiln_loader_options with C++ types and PyTorch's defaults.
struct LoaderOptions {
  int64_t batch_size = 1;
  bool shuffle = false;
  uint64_t seed = 0;
  bool drop_last = false;
  int rank = 0;  // this process's shard of `world_size`
  int world_size = 1;
  int num_workers = 0;  // 0: on the calling thread
  int prefetch = 0;     // 0: 2 per worker
  Device device;        // where batches are delivered
};

struct LoaderLength {
  int64_t examples = 0;
  int64_t batches = 0;
};

class Loader : public detail::SharedHandle<kiln_loader, kiln_loader_retain, kiln_loader_release> {
 public:
  // Batches of `source` with `transforms` run in order on each example. The
  // loader keeps what it needs of the source and the transforms: they may
  // go before it.
  Loader(const DataSource& source, const LoaderOptions& options = {},
         const std::vector<std::reference_wrapper<const Transform>>& transforms = {}) {
    std::vector<kiln_transform*> handles;
    for (const Transform& t : transforms) handles.push_back(t.get());
    kiln_loader_options o{};
    o.size = sizeof o;
    o.batch_size = options.batch_size;
    o.shuffle = options.shuffle;
    o.seed = options.seed;
    o.drop_last = options.drop_last;
    o.rank = options.rank;
    o.world_size = options.world_size;
    o.num_workers = options.num_workers;
    o.prefetch = options.prefetch;
    o.device = options.device.type;
    o.device_index = options.device.index;
    kiln_loader* loader = nullptr;
    check(kiln_loader_create(source.get(), handles.data(), handles.size(), &o, &loader));
    *this = adopt(loader);
  }
  explicit Loader(std::nullptr_t) noexcept {}
  // Takes over the caller's reference on `loader`; retain() adds one.
  static Loader adopt(kiln_loader* loader) noexcept { return Loader(loader); }
  static Loader retain(kiln_loader* loader) noexcept {
    kiln_loader_retain(loader);
    return Loader(loader);
  }

  // Examples and batches in one epoch of this shard.
  LoaderLength length() const {
    LoaderLength n;
    check(kiln_loader_length(get(), &n.examples, &n.batches));
    return n;
  }
  // Starts epoch `epoch`, abandoning what is left of the current one.
  void start_epoch(int64_t epoch) { check(kiln_loader_start_epoch(get(), epoch)); }
  // The same from batch `first_batch` on: the earlier batches are skipped
  // without being made; the rest are those of an uninterrupted epoch.
  void start_epoch_at(int64_t epoch, int64_t first_batch) {
    check(kiln_loader_start_epoch_at(get(), epoch, first_batch));
  }
  // The next batch of the epoch, or nothing when the epoch is over.
  std::optional<Example> next() {
    kiln_example* batch = nullptr;
    check(kiln_loader_next(get(), &batch));
    if (!batch) return std::nullopt;
    return Example::adopt(batch);
  }

  kiln_loader_stats stats() const {
    kiln_loader_stats s{};
    s.size = sizeof s;
    check(kiln_loader_stats_get(get(), &s));
    return s;
  }

 private:
  explicit Loader(kiln_loader* loader) noexcept : SharedHandle(loader) {}
};

}  // namespace kiln
