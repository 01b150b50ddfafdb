// The input pipeline engine: scheduling batches on the worker pool, the
// in-order delivery of ready batches, and the bookkeeping of the bound.
#include "kiln/data/loader.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <new>

#include "kiln/data/batch_builder.hpp"

namespace kiln::data {
namespace {

void check_options(int64_t num_examples, const LoaderOptions& o) {
  KILN_CHECK(num_examples >= 0, Status::invalid_argument, "the data source has ", num_examples,
             " examples; expected >= 0");
  KILN_CHECK(o.batch_size > 0, Status::invalid_argument, "batch_size is ", o.batch_size, "; expected > 0");
  KILN_CHECK(o.shard.world_size >= 1, Status::invalid_argument, "world_size is ", o.shard.world_size,
             "; expected >= 1");
  KILN_CHECK(o.shard.rank >= 0 && o.shard.rank < o.shard.world_size, Status::invalid_argument, "rank is ",
             o.shard.rank, " with world_size ", o.shard.world_size, "; expected 0 <= rank < world_size");
  KILN_CHECK(o.num_workers >= 0, Status::invalid_argument, "num_workers is ", o.num_workers,
             "; expected >= 0 (0 makes batches on the calling thread)");
  KILN_CHECK(o.prefetch >= 0, Status::invalid_argument, "prefetch is ", o.prefetch,
             "; expected >= 0 (0 chooses 2 per worker)");
}

LoaderOptions with_defaults(LoaderOptions o) {
  if (o.prefetch == 0) o.prefetch = std::max(2, 2 * o.num_workers);
  return o;
}

int64_t count_batches(int64_t examples, int64_t batch_size, bool drop_last) {
  return drop_last ? examples / batch_size : (examples + batch_size - 1) / batch_size;
}

}  // namespace

Loader::Loader(int64_t num_examples, const LoaderOptions& options, ExampleMaker make_example,
               std::shared_ptr<Allocator> batch_memory, std::shared_ptr<DeviceStager> stager,
               const Profiler* profiler)
    : options_((check_options(num_examples, options), with_defaults(options))),
      num_examples_(num_examples),
      shard_examples_(shard_length(num_examples, options.shard.rank, options.shard.world_size)),
      num_batches_(count_batches(shard_examples_, options.batch_size, options.drop_last)),
      make_example_(std::move(make_example)),
      batch_memory_(std::move(batch_memory)),
      stager_(std::move(stager)),
      profiler_(profiler) {
  if (options_.num_workers > 0) workers_ = std::make_unique<boost::asio::thread_pool>(size_t(options_.num_workers));
}

Loader::~Loader() {
  {
    std::lock_guard lock(mutex_);
    abandon_locked();
  }
  if (workers_) workers_->join();
}

void Loader::start_epoch(int64_t epoch, int64_t first_batch) {
  KILN_CHECK(epoch >= 0 && epoch <= kMaxEpoch, Status::invalid_argument, "epoch is ", epoch,
             "; expected 0 <= epoch < 2^62");
  KILN_CHECK(first_batch >= 0 && first_batch <= num_batches_, Status::invalid_argument, "first batch is ",
             first_batch, "; an epoch of this loader has ", num_batches_, " batch(es)");
  auto plan = std::make_shared<const EpochPlan>(EpochPlan{epoch, epoch_shard(num_examples_, options_.shard, epoch)});
  std::vector<std::optional<BatchResult>> slots(static_cast<size_t>(num_batches_));
  std::lock_guard lock(mutex_);
  abandon_locked();
  plan_ = std::move(plan);
  slots_ = std::move(slots);
  next_to_submit_ = first_batch;
  next_to_deliver_ = first_batch;
  submit_locked();
}

std::optional<NamedTensors> Loader::next() {
  std::unique_lock lock(mutex_);
  KILN_CHECK(plan_ || generation_ > 0, Status::invalid_state,
             "no epoch has been started; start one (epoch 0, 1, ...) before asking for batches");
  if (!plan_ || next_to_deliver_ == num_batches_) return std::nullopt;

  const auto started = std::chrono::steady_clock::now();
  BatchResult result = wait_for_batch(lock);
  record_wait_locked(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (auto* failure = std::get_if<Error>(&result)) {
    abandon_locked();  // the epoch ends with its first failure
    throw *failure;
  }
  ++stats_.batches;
  StagedBatch batch = std::get<StagedBatch>(std::move(result));
  lock.unlock();
  return stager_ ? stager_->deliver(std::move(batch)) : std::move(batch.fields);
}

// Takes the next batch out of its slot, waiting for a worker to fill it, or
// makes it here, on the calling thread, when there are no workers.
Loader::BatchResult Loader::wait_for_batch(std::unique_lock<std::mutex>& lock) {
  const int64_t batch = next_to_deliver_++;
  if (!workers_) return try_make_batch(*plan_, batch, generation_);
  const uint64_t generation = generation_;
  batch_ready_.wait(lock, [&] {
    return generation_ != generation || pool_failure_ || slots_[size_t(batch)].has_value();
  });
  if (pool_failure_) throw *pool_failure_;
  // Another thread started an epoch (or released the loader) meanwhile.
  KILN_CHECK(generation_ == generation, Status::invalid_state,
             "the epoch was abandoned while waiting for its batch ", batch);
  BatchResult result = std::move(*slots_[size_t(batch)]);
  slots_[size_t(batch)].reset();
  --ready_;
  --in_flight_;
  submit_locked();
  return result;
}

LoaderStats Loader::stats() const {
  LoaderStats s;
  {
    std::lock_guard lock(mutex_);
    s = stats_;
  }
  if (stager_) s.device_wait_seconds = stager_->device_wait_seconds();
  return s;
}

StagedBatch Loader::make_batch(const EpochPlan& plan, int64_t batch, uint64_t generation) const {
  std::optional<ProfiledSpan> traced;
  if (profiler_ && profiler_->enabled()) traced.emplace(*profiler_, "", str_cat("batch ", batch, " of epoch ", plan.epoch));
  const int64_t begin = batch * options_.batch_size;
  const int64_t end = std::min(begin + options_.batch_size, int64_t(plan.order.size()));
  BatchBuilder builder(end - begin, batch_memory_);
  for (int64_t position = begin; position < end; ++position) {
    // An abandoned batch is dropped by its worker; stop making it early.
    if (live_generation_.load(std::memory_order_relaxed) != generation) return {};
    const int64_t index = plan.order[size_t(position)];
    NamedTensors example;
    try {
      example = make_example_(index, example_seed(options_.shard.seed, plan.epoch, index));
    } catch (const Error& e) {
      throw Error(e.status(), str_cat("example ", index, " (epoch ", plan.epoch, "): ", e.what()));
    }
    builder.add(index, example);
  }
  NamedTensors made = builder.finish();
  if (!stager_) return {std::move(made), nullptr};
  try {
    // The copies as the GPU runs them, beside the worker's span.
    std::optional<ProfiledDeviceSpan> copies;
    if (traced) {
      copies.emplace(*profiler_, stager_->device(), stager_->copy_stream(), "copy stream",
                     str_cat("batch ", batch, " of epoch ", plan.epoch));
    }
    return stager_->stage(std::move(made));
  } catch (const Error& e) {
    throw Error(e.status(), str_cat("copying batch ", batch, " of epoch ", plan.epoch, " to ",
                                    to_string(stager_->device()), ": ", e.what()));
  }
}

Loader::BatchResult Loader::try_make_batch(const EpochPlan& plan, int64_t batch, uint64_t generation) const noexcept {
  try {
    return make_batch(plan, batch, generation);
  } catch (const Error& e) {
    return e;
  } catch (const std::bad_alloc&) {
    return Error(Status::out_of_memory, str_cat("out of host memory while making batch ", batch, " of epoch ",
                                                plan.epoch));
  } catch (const std::exception& e) {
    return Error(Status::internal, str_cat("internal error while making batch ", batch, " of epoch ", plan.epoch,
                                           ": ", e.what()));
  } catch (...) {
    return Error(Status::internal, str_cat("an unknown exception while making batch ", batch, " of epoch ",
                                           plan.epoch));
  }
}

// A worker's task: make the batch, then hand it over, or drop it when its
// epoch has been abandoned meanwhile (which frees its place in the bound).
void Loader::run_batch(const std::shared_ptr<const EpochPlan>& plan, int64_t batch, uint64_t generation) noexcept {
  name_profiled_thread("loader worker");
  BatchResult result = try_make_batch(*plan, batch, generation);
  std::lock_guard lock(mutex_);
  if (generation != generation_) {
    --in_flight_;
    try {
      submit_locked();
    } catch (...) {
      pool_failure_ = Error(Status::out_of_memory, "out of host memory while queueing a batch for the workers");
      batch_ready_.notify_all();
    }
    return;
  }
  slots_[size_t(batch)] = std::move(result);
  ++ready_;
  stats_.max_ready = std::max(stats_.max_ready, ready_);
  batch_ready_.notify_all();
}

// Queues the epoch's next batches while the bound allows.
void Loader::submit_locked() {
  if (!workers_ || !plan_) return;
  while (in_flight_ < options_.prefetch && next_to_submit_ < num_batches_) {
    boost::asio::post(*workers_, [this, plan = plan_, batch = next_to_submit_, generation = generation_] {
      run_batch(plan, batch, generation);
    });
    ++next_to_submit_;
    ++in_flight_;
  }
}

// Ends the current epoch: batches still being made are dropped by their
// workers, ready ones here.
void Loader::abandon_locked() {
  ++generation_;
  batch_ready_.notify_all();
  live_generation_.store(generation_, std::memory_order_relaxed);
  plan_.reset();
  slots_.clear();
  in_flight_ -= ready_;
  ready_ = 0;
}

void Loader::record_wait_locked(double seconds) {
  stats_.last_wait_seconds = seconds;
  stats_.total_wait_seconds += seconds;
}

}  // namespace kiln::data
