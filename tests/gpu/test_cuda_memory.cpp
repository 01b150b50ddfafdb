// CUDA memory: the caching allocator's reuse, statistics, cap and
// out-of-memory recovery, and host <-> device copies. Skipped with the
// reason on machines without a GPU.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <optional>
#include <random>

#ifdef KILN_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "device_test_support.hpp"
#include "kiln/error.hpp"
#include "kiln/memory/cuda.hpp"
#include "kiln/memory/memory_fraction.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

const Device kGpu = Device::cuda(0);
constexpr size_t kMiB = size_t(1) << 20;

struct DeviceMemory {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
};

// What the driver reports for cuda:0 (only called once a GPU was found).
DeviceMemory device_memory() {
  DeviceMemory m;
#ifdef KILN_WITH_CUDA
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  REQUIRE(cudaMemGetInfo(&m.free_bytes, &m.total_bytes) == cudaSuccess);
#endif
  return m;
}

// One f32 element of a GPU tensor, read on the host.
float element_at(const Tensor& t, int64_t index) {
  float value = 0;
  cuda_copy(&value, Device::cpu(), t.data<float>() + index, t.device(), sizeof value);
  return value;
}

// Sets KILN_CUDA_MEMORY_FRACTION for a scope.
class MemoryFractionVariable {
 public:
  explicit MemoryFractionVariable(const char* value) { setenv(kMemoryFractionVariable, value, 1); }
  ~MemoryFractionVariable() { unsetenv(kMemoryFractionVariable); }
  MemoryFractionVariable(const MemoryFractionVariable&) = delete;
  MemoryFractionVariable& operator=(const MemoryFractionVariable&) = delete;
};

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
  MemoryStats s = alloc->stats();
  CHECK(s.current_bytes == 0);
  CHECK(s.active_bytes == 0);
  CHECK(s.reserved_bytes == int64_t(2 * kMiB));  // one small segment, cached
  CHECK(s.num_reserves == 1);
  CHECK(s.num_allocs == s.num_frees);
  CHECK(s.peak_bytes >= 4096 + 120);
  alloc->empty_cache();
  s = alloc->stats();
  CHECK(s.reserved_bytes == 0);
  CHECK(s.num_releases == 1);
}

TEST_CASE("a freed GPU block is reused without another cudaMalloc", "[gpu][memory]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::shared_ptr<Allocator>& alloc = rt.allocator(kGpu);
  void* first = nullptr;
  {
    Tensor t = rt.full({1 << 20}, 2.0, DType::f32, kGpu);  // 4 MiB: the large pool
    first = t.raw_data();
  }
  Tensor again = rt.full({1 << 20}, 5.0, DType::f32, kGpu);
  CHECK(again.raw_data() == first);
  const MemoryStats s = alloc->stats();
  CHECK(s.num_reserves == 1);
  CHECK(s.cache_hits == 1);
  CHECK(element_at(again, 0) == 5.0f);
  CHECK(element_at(again, (1 << 20) - 1) == 5.0f);
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

TEST_CASE("allocating 60% of the GPU twice fails with the statistics, and succeeds once the first is freed",
          "[gpu][memory][errors]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const int64_t numel = int64_t(0.6 * double(device_memory().total_bytes)) / 4;
  std::optional<Tensor> first = rt.empty({numel}, DType::f32, kGpu);
  try {
    rt.empty({numel}, DType::f32, kGpu);
    FAIL("two allocations of 60% of the GPU succeeded");
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.status() == Status::out_of_memory);
    CHECK_THAT(e.what(), Catch::Contains("cuda:0: out of memory allocating " + std::to_string(numel * 4) + " bytes") &&
                             Catch::Contains("kiln holds 1 allocation(s)") && Catch::Contains("allocated ") &&
                             Catch::Contains("reserved ") && Catch::Contains("free cached ") &&
                             Catch::Contains("cap none") && Catch::Contains("the GPU has ") &&
                             Catch::Contains("the cache was emptied and the request retried"));
  }
  CHECK(rt.allocator(kGpu)->stats().num_cache_flushes == 1);
  first.reset();
  const Tensor second = rt.full({numel}, 3.0, DType::f32, kGpu);
  for (int64_t index : {int64_t(0), numel / 2, numel - 1}) CHECK(element_at(second, index) == 3.0f);
}

TEST_CASE("a runtime gives back all the GPU memory it took", "[gpu][memory]") {
  {
    // The CUDA context (and the libraries' state) costs memory once per
    // process: the baseline is taken after a first runtime set it up.
    Runtime warm;
    if (skip_without_gpu(warm)) return;
    warm.full({1024}, 1.0, DType::f32, kGpu);
  }
  const size_t before = device_memory().free_bytes;
  const size_t held = 1024 * kMiB;
  {
    Runtime rt;
    Tensor big = rt.full({int64_t(held / 4)}, 1.0, DType::f32, kGpu);
    Tensor small = rt.full({1000}, 1.0, DType::f32, kGpu);
    CHECK(device_memory().free_bytes + held <= before);
  }
  const size_t after = device_memory().free_bytes;
  INFO("free before: " << before << ", after: " << after);
  CHECK(after + 64 * kMiB >= before);
}

TEST_CASE("KILN_CUDA_MEMORY_FRACTION caps what the GPU allocator reserves", "[gpu][memory]") {
  const MemoryFractionVariable quarter("0.25");
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const size_t total = device_memory().total_bytes;
  const MemoryStats s = rt.allocator(kGpu)->stats();
  CHECK(s.limit_bytes == int64_t(memory_limit_bytes(0.25, total)));
  try {
    rt.empty({int64_t(0.3 * double(total))}, DType::u8, kGpu);
    FAIL("an allocation over the cap succeeded");
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.status() == Status::out_of_memory);
    CHECK_THAT(e.what(), Catch::Contains("cap ") && !Catch::Contains("cap none"));
  }
  Tensor under = rt.full({int64_t(0.2 * double(total)) / 4}, 1.0, DType::f32, kGpu);
  CHECK(rt.allocator(kGpu)->stats().reserved_bytes <= s.limit_bytes);
}

TEST_CASE("a malformed KILN_CUDA_MEMORY_FRACTION is refused when the GPU allocator is made", "[gpu][memory][errors]") {
  const MemoryFractionVariable bad("half");
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  try {
    rt.allocator(kGpu);
    FAIL("the allocator accepted KILN_CUDA_MEMORY_FRACTION=half");
  } catch (const Error& e) {
    CHECK(e.status() == Status::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("KILN_CUDA_MEMORY_FRACTION=\"half\""));
  }
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
