// Pieces under the ops: allocator, random stream, thread pool, dtypes,
// shapes, and the independence of runtimes.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <thread>

#include "kiln/error.hpp"
#include "kiln/memory/cpu_allocator.hpp"
#include "kiln/runtime.hpp"
#include "kiln/util/philox.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;

TEST_CASE("cpu allocator aligns to 64 bytes and keeps statistics", "[core][memory]") {
  Runtime rt;
  const MemoryStats before = rt.allocator(Device::cpu())->stats();
  {
    Tensor a = rt.empty({100}, DType::f32);
    Tensor b = rt.empty({3}, DType::u8);
    CHECK(reinterpret_cast<uintptr_t>(a.raw_data()) % 64 == 0);
    CHECK(reinterpret_cast<uintptr_t>(b.raw_data()) % 64 == 0);
    const MemoryStats during = rt.allocator(Device::cpu())->stats();
    CHECK(during.current_bytes - before.current_bytes == 403);
    CHECK(during.num_allocs - before.num_allocs == 2);
    CHECK(during.peak_bytes >= during.current_bytes);
  }
  const MemoryStats after = rt.allocator(Device::cpu())->stats();
  CHECK(after.current_bytes == before.current_bytes);
  CHECK(after.num_frees - before.num_frees == 2);
}

TEST_CASE("without a GPU, memory for GPU-bound data is ordinary CPU memory", "[core][memory]") {
  Runtime rt;
  if (rt.devices().cuda_device_count > 0) {
    WARN("skipped: a GPU is present; tests/gpu checks the page-locked allocator");
    return;
  }
  CHECK(rt.pinned_allocator() == rt.allocator(Device::cpu()));
}

TEST_CASE("memory outlives the runtime while tensors hold it", "[core][memory]") {
  Tensor survivor;
  {
    Runtime rt;
    survivor = rt.full({4}, 2.5);
  }
  CHECK(survivor.data<float>()[3] == 2.5f);
}

TEST_CASE("an absurd allocation is a clean out-of-memory error", "[core][memory][errors]") {
  Runtime rt;
  try {
    rt.empty({int64_t(1) << 40, int64_t(1) << 20}, DType::f32);
    FAIL("a petabyte allocation succeeded");
  } catch (const Error& e) {
    CHECK((e.status() == Status::out_of_memory || e.status() == Status::invalid_argument));
    CHECK_THAT(e.what(), Catch::Contains("bytes") || Catch::Contains("too large"));
  }
}

TEST_CASE("Philox4x32-10 matches the published known answers", "[core][random]") {
  // Known-answer vectors of Random123 (kat_vectors, philox4x32_10).
  auto zero = Philox::block(0, 0, 0);
  CHECK(zero == std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  auto ones = Philox::block(~uint64_t(0), ~uint64_t(0), ~uint64_t(0));
  CHECK(ones == std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
  auto pi = Philox::block(0x299f31d0a4093822ull, 0x0370734413198a2eull, 0x85a308d3243f6a88ull);
  CHECK(pi == std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEST_CASE("random ranges never overlap and the state round-trips", "[core][random]") {
  Runtime rt({.num_threads = 1, .seed = 7});
  const GeneratorState a = rt.reserve_random(10);
  const GeneratorState b = rt.reserve_random(5);
  CHECK(a.seed == 7);
  CHECK(b.offset == a.offset + 10);
  const GeneratorState saved = rt.generator_state();
  rt.reserve_random(3);
  rt.set_generator_state(saved);
  CHECK(rt.reserve_random(1).offset == saved.offset);
  rt.manual_seed(9);
  CHECK(rt.generator_state().seed == 9);
  CHECK(rt.generator_state().offset == 0);
}

TEST_CASE("thread pool covers the range once and rethrows worker errors", "[core][threads]") {
  ThreadPool pool(3);
  std::vector<int> hits(100000, 0);
  pool.parallel_for(int64_t(hits.size()), 1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) ++hits[size_t(i)];
  });
  CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
  CHECK_THROWS_WITH(pool.parallel_for(100000, 10,
                                      [&](int64_t b, int64_t) {
                                        if (b > 50000) throw Error(Status::internal, "chunk failed");
                                      }),
                    "chunk failed");
  // Nested use runs inline instead of deadlocking.
  std::atomic<int64_t> total{0};
  pool.parallel_for(8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      pool.parallel_for(10, 1, [&](int64_t bb, int64_t ee) { total += ee - bb; });
  });
  CHECK(total == 80);
}

TEST_CASE("half and bfloat16 conversions round to nearest even", "[core][dtype]") {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 0.333251953125f})
    CHECK(half_to_float(float_to_half(f)) == f);
  CHECK(std::isinf(half_to_float(float_to_half(70000.0f))));
  CHECK(std::isnan(half_to_float(float_to_half(NAN))));
  CHECK(half_to_float(float_to_half(1.0f + 1.0f / 4096)) == 1.0f);  // halfway: rounds to even
  for (float f : {0.0f, 1.0f, -3.0f, 0x1.5p100f}) CHECK(bf16_to_float(float_to_bf16(f)) == f);
  CHECK(bf16_to_float(float_to_bf16(1.00390625f)) == 1.0f);  // halfway: rounds to even
  CHECK(std::isnan(bf16_to_float(float_to_bf16(NAN))));
  DType t;
  CHECK(parse_dtype("bfloat16", &t));
  CHECK(t == DType::bf16);
  CHECK_FALSE(parse_dtype("float128", &t));
}

TEST_CASE("shapes: limits, broadcasting and dimension errors", "[core][shape]") {
  CHECK_THROWS_WITH(Shape({1, 2, 3, 4, 5, 6, 7, 8, 9}), Catch::Contains("at most 8"));
  CHECK(broadcast_shapes({3, 1, 5}, {4, 1}, "add") == Shape{3, 4, 5});
  CHECK_THROWS_WITH(broadcast_shapes({3, 2}, {4, 3}, "add"),
                    Catch::Contains("op 'add'") && Catch::Contains("[3, 2]") && Catch::Contains("[4, 3]"));
  CHECK_THROWS_WITH(normalize_dim(3, 2, "sum"), Catch::Contains("op 'sum'") && Catch::Contains("out of range"));
  Device d;
  CHECK(parse_device("cuda:3", &d));
  CHECK(d == Device::cuda(3));
  CHECK_FALSE(parse_device("cuda:x", &d));
  CHECK_FALSE(parse_device("tpu", &d));
}

TEST_CASE("two runtimes share nothing", "[core]") {
  Runtime a({.num_threads = 2, .seed = 1}), b({.num_threads = 1, .seed = 1});
  CHECK(a.id() != b.id());
  CHECK(&a.op("copy") != &b.op("copy"));
  a.reserve_random(100);
  CHECK(b.generator_state().offset == 0);
  Tensor x = a.full({1000}, 1.0);
  CHECK(b.allocator(Device::cpu())->stats().current_bytes == 0);
}

TEST_CASE("a device that does not exist is refused with the reason", "[core][errors]") {
  Runtime rt;
  if (rt.devices().cuda_device_count > 0) return;
  try {
    rt.full({2}, 1.0, DType::f32, Device::cuda(0));
    FAIL("allocated on a GPU that is not there");
  } catch (const Error& e) {
    CHECK(e.status() == Status::device_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("cuda:0") && Catch::Contains(rt.devices().cuda_unavailable_reason));
  }
}
