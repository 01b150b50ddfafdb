// Batches bound for a GPU: copies queued beside compute, the compute
// stream's wait, the lifetime of page-locked sources, device memory reuse
// across the two streams, and the loader's workers staging batches. The
// device is a fake (host memory, copies run when the test says), so all of
// it runs without a GPU.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <cstring>

#include "fake_transfer_queue.hpp"
#include "kiln/data/device_stager.hpp"
#include "kiln/data/loader.hpp"
#include "kiln/memory/cpu_allocator.hpp"
#include "memory/caching_test_support.hpp"

namespace {

using kiln::DType;
using kiln::Tensor;
using kiln::data::DeviceStager;
using kiln::data::NamedTensors;
using kiln::data::StagedBatch;
using kiln::test::FakeDevice;
using kiln::test::FakeTransferQueue;
using kiln::test::kMiB;

struct Rig {
  explicit Rig(bool run_at_once = false, size_t device_bytes = 64 * kMiB)
      : device(std::make_shared<FakeDevice>(device_bytes)),
        queue(std::make_shared<FakeTransferQueue>(run_at_once)),
        device_memory(kiln::test::make_caching_allocator(device)),
        host_memory(std::make_shared<kiln::CpuAllocator>()),
        stager(std::make_shared<DeviceStager>(queue, device_memory)) {}

  // "x" f32 [rows, 4] and "y" i64 [rows], both filled with bytes `fill`.
  NamedTensors host_batch(int64_t rows, int fill) const {
    Tensor x = Tensor::empty({rows, 4}, DType::f32, host_memory);
    Tensor y = Tensor::empty({rows}, DType::i64, host_memory);
    std::memset(x.raw_data(), fill, x.nbytes());
    std::memset(y.raw_data(), fill, y.nbytes());
    return {{"x", x}, {"y", y}};
  }
  int64_t host_bytes() const { return host_memory->stats().current_bytes; }

  std::shared_ptr<FakeDevice> device;
  std::shared_ptr<FakeTransferQueue> queue;
  std::shared_ptr<kiln::CachingAllocator> device_memory;
  std::shared_ptr<kiln::CpuAllocator> host_memory;
  std::shared_ptr<DeviceStager> stager;
};

bool all_bytes(const Tensor& t, int value) {
  const auto* p = static_cast<const unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.nbytes(); ++i)
    if (p[i] != value) return false;
  return true;
}

}  // namespace

TEST_CASE("device stager: a batch is copied on the copy stream and compute waits for it", "[pipeline][stager]") {
  Rig rig;
  StagedBatch staged = rig.stager->stage(rig.host_batch(3, 7));
  REQUIRE(staged.fields.size() == 2);
  CHECK(staged.fields[0].name == "x");
  CHECK(staged.fields[1].name == "y");
  CHECK(staged.fields[0].tensor.device() == kiln::Device::cuda(0));
  CHECK(staged.fields[0].tensor.shape() == kiln::Shape{3, 4});
  CHECK(staged.fields[1].tensor.dtype() == DType::i64);
  CHECK(rig.queue->copies_run() == 0);  // queued, not waited for
  const auto ticket = staged.copy->ticket();

  const NamedTensors delivered = rig.stager->deliver(std::move(staged));
  CHECK(rig.queue->waited_for() == std::vector<kiln::TransferQueue::Ticket>{ticket});
  CHECK(rig.queue->host_waits() == 0);  // the host never blocked
  rig.queue->run_copies();
  CHECK(all_bytes(delivered[0].tensor, 7));
  CHECK(all_bytes(delivered[1].tensor, 7));
}

TEST_CASE("device stager: the page-locked source lives until its copy has run", "[pipeline][stager]") {
  Rig rig;
  NamedTensors delivered = rig.stager->deliver(rig.stager->stage(rig.host_batch(5, 1)));
  CHECK(rig.host_bytes() == 5 * 4 * 4 + 5 * 8);
  CHECK(rig.stager->device_wait_seconds() == 0.0);  // nothing has run yet
  CHECK(rig.host_bytes() > 0);

  rig.queue->run_copies();
  CHECK(rig.host_bytes() > 0);  // the compute stream's wait is not measured yet
  rig.queue->finish_compute();
  CHECK(rig.stager->device_wait_seconds() == FakeTransferQueue::kProbeSeconds);
  CHECK(rig.host_bytes() == 0);
  CHECK(rig.queue->live_tickets() == 0);
  CHECK(rig.queue->live_probes() == 0);
}

TEST_CASE("device stager: memory read by compute is not reused for a copy before compute is done",
          "[pipeline][stager]") {
  Rig rig;
  NamedTensors first = rig.stager->deliver(rig.stager->stage(rig.host_batch(64, 1)));
  const void* const first_x = first[0].tensor.raw_data();
  rig.queue->run_copies();
  rig.queue->finish_compute();
  first.clear();  // freed while the compute stream may still read it
  REQUIRE(rig.device->event_streams.size() == 2);  // one event per field, on the compute stream
  CHECK(rig.device->event_streams[0] == rig.queue->compute_stream());
  CHECK(rig.device->event_streams[1] == rig.queue->compute_stream());

  StagedBatch meanwhile = rig.stager->stage(rig.host_batch(64, 2));
  CHECK(meanwhile.fields[0].tensor.raw_data() != first_x);
  CHECK(meanwhile.fields[1].tensor.raw_data() != first_x);
  const int64_t batch_bytes = rig.device_memory->stats().current_bytes;
  CHECK(rig.device_memory->stats().active_bytes == 2 * batch_bytes);  // the first batch's blocks are held
  meanwhile = StagedBatch{};

  rig.device->complete(1);
  rig.device->complete(2);
  const StagedBatch later = rig.stager->stage(rig.host_batch(64, 3));
  CHECK(rig.device_memory->stats().active_bytes == batch_bytes);  // and now given back
  CHECK(rig.device->reserves == 1);
}

TEST_CASE("device stager: copies in flight are waited for before their sources go", "[pipeline][stager]") {
  Rig rig;
  {
    StagedBatch never_delivered = rig.stager->stage(rig.host_batch(4, 9));
    CHECK(rig.queue->copies_run() == 0);
  }
  CHECK(rig.queue->host_waits() == 1);
  CHECK(rig.queue->copies_run() == 2);
  CHECK(rig.host_bytes() == 0);

  const NamedTensors delivered = rig.stager->deliver(rig.stager->stage(rig.host_batch(4, 9)));
  rig.stager.reset();  // the loader goes with the copy still queued
  CHECK(rig.queue->host_waits() == 2);
  CHECK(rig.queue->copies_run() == 4);
  CHECK(rig.host_bytes() == 0);
  CHECK(rig.queue->live_tickets() == 0);
  CHECK(rig.queue->live_probes() == 0);
  CHECK(all_bytes(delivered[0].tensor, 9));
}

TEST_CASE("device stager: a batch that does not fit waits for its queued copies and fails", "[pipeline][stager]") {
  Rig rig(false, 8 * kMiB);
  Tensor small = Tensor::empty({16}, DType::f32, rig.host_memory);
  Tensor large = Tensor::empty({int64_t(16 * kMiB)}, DType::u8, rig.host_memory);
  try {
    rig.stager->stage({{"small", small}, {"large", large}});
    FAIL("staging succeeded");
  } catch (const kiln::Error& e) {
    CHECK(e.status() == kiln::Status::out_of_memory);
    CHECK_THAT(e.what(), Catch::Contains("16.0 MiB"));
  }
  CHECK(rig.queue->host_waits() == 1);
  CHECK(rig.queue->copies_run() == 1);
  CHECK(rig.queue->live_tickets() == 0);
}

TEST_CASE("device stager: a loader's workers stage batches that arrive in order", "[pipeline][stager]") {
  Rig rig(true);
  kiln::data::LoaderOptions options;
  options.batch_size = 3;
  options.num_workers = 2;
  const auto host_memory = rig.host_memory;
  kiln::data::Loader loader(
      20, options,
      [host_memory](int64_t i, uint64_t) {
        Tensor t = Tensor::empty({2}, DType::i32, host_memory);
        t.data<int32_t>()[0] = int32_t(i);
        t.data<int32_t>()[1] = int32_t(-i);
        return NamedTensors{{"v", t}};
      },
      host_memory, rig.stager);
  loader.start_epoch(0);
  int32_t expected = 0;
  int batches = 0;
  while (auto batch = loader.next()) {
    const Tensor& v = batch->front().tensor;
    REQUIRE(v.device() == kiln::Device::cuda(0));
    for (int64_t row = 0; row < v.dim(0); ++row, ++expected) {
      CHECK(v.data<int32_t>()[2 * row] == expected);
      CHECK(v.data<int32_t>()[2 * row + 1] == -expected);
    }
    ++batches;
  }
  CHECK(expected == 20);
  CHECK(batches == 7);
  CHECK(rig.queue->waited_for().size() == 7);
  rig.queue->finish_compute();
  CHECK(loader.stats().device_wait_seconds == 7 * FakeTransferQueue::kProbeSeconds);
}

TEST_CASE("device stager: a failed copy ends the epoch with an error naming the batch", "[pipeline][stager]") {
  Rig rig(true, 4 * kMiB);
  kiln::data::LoaderOptions options;
  options.batch_size = 2;
  const auto host_memory = rig.host_memory;
  kiln::data::Loader loader(
      4, options,
      [host_memory](int64_t, uint64_t) {
        return NamedTensors{{"big", Tensor::empty({int64_t(4 * kMiB)}, DType::u8, host_memory)}};
      },
      host_memory, rig.stager);
  loader.start_epoch(0);
  try {
    loader.next();
    FAIL("the batch was delivered");
  } catch (const kiln::Error& e) {
    CHECK(e.status() == kiln::Status::out_of_memory);
    CHECK_THAT(e.what(), Catch::StartsWith("copying batch 0 of epoch 0 to cuda:0: "));
  }
}
