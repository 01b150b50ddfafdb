// Input batches copied to cuda:0 on the runtime's copy stream while kernels
// run on the compute stream: the data the kernels read, the loader's batches
// against the CPU's, and the page-locked memory given back.
#include <catch2/catch.hpp>
#include <cstring>

#include "device_test_support.hpp"
#include "kiln/data/device_stager.hpp"
#include "kiln/data/loader.hpp"
#include "kiln/error.hpp"
#include "kiln/memory/caching_allocator.hpp"
#include "kiln/memory/transfer_queue.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

std::shared_ptr<data::DeviceStager> stager_for(Runtime& rt, Device device) {
  auto memory = std::dynamic_pointer_cast<CachingAllocator>(rt.allocator(device));
  REQUIRE(memory);
  return std::make_shared<data::DeviceStager>(rt.transfer_queue(device), memory);
}

// Example `i`: "x" f32 [256] holding i, i+1, ...; "label" i64 [] holding i.
data::NamedTensors example(Runtime& rt, int64_t i) {
  Tensor x = rt.empty({256}, DType::f32);
  for (int64_t k = 0; k < 256; ++k) x.data<float>()[k] = float(i + k);
  Tensor label = rt.empty({}, DType::i64);
  *label.data<int64_t>() = i;
  return {{"x", x}, {"label", label}};
}

std::vector<std::vector<uint8_t>> epoch_bytes(Runtime& rt, data::Loader& loader) {
  std::vector<std::vector<uint8_t>> all;
  loader.start_epoch(1);
  while (auto batch = loader.next())
    for (const data::NamedTensor& field : *batch) all.push_back(host_bytes(rt, field.tensor));
  return all;
}

}  // namespace

TEST_CASE("input copies go to a GPU only", "[device][input]") {
  Runtime rt;
  try {
    rt.transfer_queue(Device::cpu());
    FAIL("a transfer queue to the CPU was made");
  } catch (const Error& e) {
    CHECK(e.status() == Status::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("input copies go to a GPU, not to cpu"));
  }
  if (rt.devices().cuda_device_count > 0) return;
  try {
    rt.transfer_queue(Device::cuda(0));
    FAIL("a transfer queue to a missing GPU was made");
  } catch (const Error& e) {
    CHECK(e.status() == Status::device_mismatch);
    CHECK_THAT(e.what(), Catch::Contains(rt.devices().cuda_unavailable_reason));
  }
}

TEST_CASE("kernels read what the copy stream brought", "[cuda][input]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const Device gpu = Device::cuda(0);
  auto stager = stager_for(rt, gpu);
  // Many batches through few page-locked buffers: a source freed before its
  // copy ran would be overwritten by a later batch and show here.
  for (int round = 0; round < 40; ++round) {
    INFO("batch " << round);
    Tensor host = Tensor::empty({1 << 18}, DType::f32, rt.pinned_allocator());
    for (int64_t k = 0; k < host.numel(); ++k) host.data<float>()[k] = float(round * 3 + k % 7);
    const Tensor expected = rt.call1("mul_scalar", {host}, {{"value", 2.0}});
    data::NamedTensors batch = stager->deliver(stager->stage({{"x", host}}));
    host = Tensor();
    const Tensor doubled = rt.call1("mul_scalar", {batch[0].tensor}, {{"value", 2.0}});
    CHECK(host_bytes(rt, doubled) == host_bytes(rt, expected));
  }
  CHECK(stager->device_wait_seconds() >= 0.0);
}

TEST_CASE("a loader bound for cuda:0 delivers the batches of the CPU", "[cuda][input]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  data::LoaderOptions options;
  options.batch_size = 5;
  options.num_workers = 3;
  options.shard.shuffle = true;
  options.shard.seed = 17;
  const auto make = [&rt](int64_t i, uint64_t) { return example(rt, i); };
  std::vector<std::vector<uint8_t>> on_cpu, on_gpu;
  {
    data::Loader loader(47, options, make, rt.allocator(Device::cpu()));
    on_cpu = epoch_bytes(rt, loader);
  }
  {
    data::Loader loader(47, options, make, rt.pinned_allocator(), stager_for(rt, Device::cuda(0)));
    on_gpu = epoch_bytes(rt, loader);
    CHECK(loader.stats().device_wait_seconds >= 0.0);
  }
  CHECK(on_gpu.size() == 20);
  CHECK(on_gpu == on_cpu);
  CHECK(rt.pinned_allocator()->stats().current_bytes == 0);  // every source given back
}
