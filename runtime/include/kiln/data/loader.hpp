// The input pipeline engine: turns examples made by index into batches of
// one epoch, made ahead of the training loop by a pool of worker threads.
//
//   kiln::data::Loader loader(source_length, options, make_example, cpu_allocator);
//   // bound for a GPU: pinned memory, and a stager that copies each batch there
//   kiln::data::Loader loader(n, options, make_example, pinned_allocator, stager);
//   loader.start_epoch(0);
//   while (auto batch = loader.next()) train_on(*batch);
//
// Determinism: a batch depends only on the options and the epoch (its
// examples' order, shard and transform seeds), never on the workers or on
// timing; workers may finish out of order, batches are delivered in order.
// Bound: at most `prefetch` batches are ready or being made at any time,
// those of an abandoned epoch that are still finishing included.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <variant>
#include <vector>

#include "kiln/data/device_stager.hpp"
#include "kiln/data/epoch_order.hpp"
#include "kiln/data/named_tensors.hpp"
#include "kiln/error.hpp"
#include "kiln/memory/allocator.hpp"
#include "kiln/profiler/profiler.hpp"

namespace boost::asio {
class thread_pool;
}

namespace kiln::data {

struct LoaderOptions {
  int64_t batch_size = 1;  // > 0
  bool drop_last = false;  // drop the epoch's last batch when it is smaller than batch_size
  ShardOptions shard;
  int num_workers = 0;  // 0: next() makes each batch on the calling thread
  int prefetch = 0;     // batches made ahead; 0: 2 per worker
};

struct LoaderStats {
  int64_t batches = 0;  // delivered since creation
  double last_wait_seconds = 0;
  double total_wait_seconds = 0;
  int64_t max_ready = 0;  // most batches waiting ready at once
  // A loader bound for a GPU: seconds the compute stream waited for input
  // copies, over the batches whose waits have been measured.
  double device_wait_seconds = 0;
};

// Makes example `index` with its transforms run from `seed`. Called from the
// worker threads, several at once; throws kiln::Error on failure.
using ExampleMaker = std::function<NamedTensors(int64_t index, uint64_t seed)>;

class Loader {
 public:
  // Checks the options (throws invalid_argument saying what was expected).
  // `batch_memory` allocates the batches (a CPU allocator, pinned or not).
  // With a `stager`, the worker that makes a batch also starts its copy to
  // the stager's device, and next() delivers it there. While `profiler`
  // (which must outlive the loader) records, each batch made is a span
  // ("batch 3 of epoch 0") on the track of the thread that made it, the
  // workers' tracks named "loader worker"; with a stager, its copies are a
  // span of the same name on the device's "copy stream" track, timed there.
  Loader(int64_t num_examples, const LoaderOptions& options, ExampleMaker make_example,
         std::shared_ptr<Allocator> batch_memory, std::shared_ptr<DeviceStager> stager = nullptr,
         const Profiler* profiler = nullptr);
  ~Loader();  // abandons the epoch and joins the workers
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Examples and batches of this shard in one epoch.
  int64_t shard_examples() const { return shard_examples_; }
  int64_t num_batches() const { return num_batches_; }
  const LoaderOptions& options() const { return options_; }

  // Abandons what is left of the current epoch (workers drop their work)
  // and starts making the batches of `epoch` from `first_batch` on (a
  // resumed run skips those it already took; 0 <= first_batch <= num_batches()).
  void start_epoch(int64_t epoch, int64_t first_batch = 0);

  // The next batch of the epoch, or nothing when it is over. A failed batch
  // throws its error (naming the example) and ends the epoch.
  std::optional<NamedTensors> next();

  LoaderStats stats() const;

 private:
  struct EpochPlan {
    int64_t epoch;
    std::vector<int64_t> order;  // this shard's example indices, in delivery order
  };
  using BatchResult = std::variant<StagedBatch, Error>;

  StagedBatch make_batch(const EpochPlan& plan, int64_t batch, uint64_t generation) const;
  BatchResult try_make_batch(const EpochPlan& plan, int64_t batch, uint64_t generation) const noexcept;
  void run_batch(const std::shared_ptr<const EpochPlan>& plan, int64_t batch, uint64_t generation) noexcept;
  BatchResult wait_for_batch(std::unique_lock<std::mutex>& lock);
  void submit_locked();
  void abandon_locked();
  void record_wait_locked(double seconds);

  const LoaderOptions options_;
  const int64_t num_examples_;
  const int64_t shard_examples_;
  const int64_t num_batches_;
  const ExampleMaker make_example_;
  const std::shared_ptr<Allocator> batch_memory_;
  const std::shared_ptr<DeviceStager> stager_;  // null: batches stay on the CPU
  const Profiler* const profiler_;              // null: batches are never traced

  mutable std::mutex mutex_;
  std::condition_variable batch_ready_;
  // Bumped by every start_epoch and abandonment; a worker whose batch
  // belongs to an older generation drops it. Mirrored in an atomic so that
  // workers can give up between examples without taking the lock.
  uint64_t generation_ = 0;
  std::atomic<uint64_t> live_generation_{0};
  std::shared_ptr<const EpochPlan> plan_;  // null before the first epoch and after a failure
  std::vector<std::optional<BatchResult>> slots_;  // one per batch of the epoch; filled when ready
  int64_t next_to_submit_ = 0;
  int64_t next_to_deliver_ = 0;
  int64_t in_flight_ = 0;  // submitted, not yet delivered or dropped (abandoned ones included)
  int64_t ready_ = 0;      // in slots_, not yet delivered
  std::optional<Error> pool_failure_;  // the pool itself failed (no memory to queue a task)
  LoaderStats stats_;

  // Last: destroyed (joined) first, while everything the workers touch lives.
  std::unique_ptr<boost::asio::thread_pool> workers_;
};

}  // namespace kiln::data
