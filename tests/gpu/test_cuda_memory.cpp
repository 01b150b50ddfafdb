// CUDA memory: the allocator's statistics and out-of-memory report, and
// host <-> device copies. Skipped with the reason on machines without a GPU.
#include <catch2/catch.hpp>
#include <random>

#include "device_test_support.hpp"
#include "kiln/error.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

const Device kGpu = Device::cuda(0);

// Random bit patterns (NaNs included: a copy must keep them); bools stay 0/1.
Tensor random_bits(Runtime& rt, const Shape& shape, DType dtype) {
  Tensor t = rt.empty(shape, dtype);
  std::mt19937 gen(uint32_t(dtype_size(dtype) * 131 + size_t(dtype)));
  auto* bytes = static_cast<uint8_t*>(t.raw_data());
  for (size_t i = 0; i < t.nbytes(); ++i) bytes[i] = dtype == DType::boolean ? uint8_t(gen() & 1) : uint8_t(gen());
  return t;
}

}  // namespace

TEST_CASE("host -> device -> host copies are bit-exact for every dtype", "[gpu][memory]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType t : kAllDTypes) {
    INFO(dtype_name(t));
    Tensor host = random_bits(rt, {37, 29}, t);
    Tensor gpu = to_device(rt, host, kGpu);
    CHECK(gpu.device() == kGpu);
    Tensor same_gpu = to_device(rt, gpu, kGpu);  // device to device
    CHECK(same_gpu.storage() != gpu.storage());
    Tensor back = to_device(rt, same_gpu, Device::cpu());
    CHECK(back.device() == Device::cpu());
    CHECK(host_bytes(rt, back) == host_bytes(rt, host));
  }
}

TEST_CASE("CUDA allocator statistics rise and return to zero", "[gpu][memory]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::shared_ptr<Allocator>& alloc = rt.allocator(kGpu);
  CHECK(alloc->device() == kGpu);
  REQUIRE(alloc->stats().current_bytes == 0);
  {
    Tensor a = rt.empty({1024}, DType::f32, kGpu);
    Tensor b = rt.empty({3, 5}, DType::f64, kGpu);
    const MemoryStats s = alloc->stats();
    CHECK(s.current_bytes == 4096 + 120);
    CHECK(s.reserved_bytes >= s.current_bytes);
    CHECK(s.peak_bytes >= s.current_bytes);
    CHECK(s.num_allocs - s.num_frees == 2);
  }
  const MemoryStats s = alloc->stats();
  CHECK(s.current_bytes == 0);
  CHECK(s.reserved_bytes == 0);
  CHECK(s.num_allocs == s.num_frees);
  CHECK(s.peak_bytes >= 4096 + 120);
}

TEST_CASE("an absurd GPU allocation reports out of memory with the size and device", "[gpu][memory][errors]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const int64_t petabyte = int64_t(1) << 50;
  try {
    rt.empty({petabyte}, DType::u8, kGpu);
    FAIL("a 1 PiB allocation succeeded");
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.status() == Status::out_of_memory);
    CHECK_THAT(e.what(), Catch::Contains("cuda:0") && Catch::Contains(std::to_string(petabyte)) &&
                             Catch::Contains("1.0 PiB") && Catch::Contains("kiln holds"));
  }
  // The failure leaves the device usable.
  CHECK(host_bytes(rt, rt.full({4}, 1.0, DType::u8, kGpu)) == std::vector<uint8_t>(4, 1));
}

TEST_CASE("page-locked host memory is reused by size and its copies are exact", "[gpu][memory]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::shared_ptr<Allocator>& pinned = rt.pinned_allocator();
  CHECK(pinned != rt.allocator(Device::cpu()));
  CHECK(pinned->device() == Device::cpu());
  const size_t bytes = 1 << 20;
  void* first = nullptr;
  {
    DataPtr block = pinned->allocate(bytes);
    first = block.get();
    REQUIRE(first != nullptr);
  }
  const MemoryStats after_free = pinned->stats();
  CHECK(after_free.current_bytes == 0);
  CHECK(after_free.reserved_bytes == int64_t(bytes));  // kept for reuse
  DataPtr again = pinned->allocate(bytes);
  CHECK(again.get() == first);
  CHECK(pinned->stats().reserved_bytes == int64_t(bytes));

  Tensor host = Tensor::empty({256, 1024}, DType::f32, pinned);
  float* values = host.data<float>();
  for (int64_t i = 0; i < host.numel(); ++i) values[i] = float(i % 977) * 0.5f;
  const Tensor gpu = to_device(rt, host, kGpu);
  CHECK(host_bytes(rt, gpu) == host_bytes(rt, host));
}
