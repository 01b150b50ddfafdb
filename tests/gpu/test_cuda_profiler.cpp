// The profiler on cuda:0: a forward and backward there records each call
// on the GPU, forward and backward apart, each nested call inside its
// parent; the GPU's own time for calls and input copies is on the tracks
// of its streams.
#include <algorithm>

#include "device_test_support.hpp"
#include "kiln/data/device_stager.hpp"
#include "kiln/data/loader.hpp"
#include "kiln/memory/caching_allocator.hpp"
#include "kiln/profiler/profiler.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("profiler: calls on cuda:0 are recorded on it, in both phases", "[device][profiler]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const Device gpu = Device::cuda(0);
  Tensor x = rt.full({4, 3}, 0.5, DType::f32, gpu), w = rt.full({2, 3}, 0.25, DType::f32, gpu);
  w.set_requires_grad(true);
  rt.profiler().begin();
  rt.backward(rt.call1("sum", {rt.call1("linear", {x, w})}));
  rt.profiler().end();
  const std::vector<ProfileEvent> events = rt.profiler().events();
  auto find = [&](const std::string& name) {
    return std::find_if(events.begin(), events.end(), [&](const ProfileEvent& e) { return e.name == name; });
  };
  REQUIRE(find("linear") != events.end());
  CHECK(find("linear")->device == gpu);
  CHECK(find("linear")->phase == ProfilePhase::forward);
  REQUIRE(find("linear backward") != events.end());
  CHECK(find("linear backward")->device == gpu);
  CHECK(find("linear backward")->phase == ProfilePhase::backward);
  for (const ProfileEvent& e : events) {
    CHECK(e.self_ns() >= 0);
    if (e.depth == 0) continue;
    CHECK(std::any_of(events.begin(), events.end(), [&](const ProfileEvent& p) {
      return p.depth == e.depth - 1 && p.start_ns <= e.start_ns && e.end_ns <= p.end_ns;
    }));
  }
}

TEST_CASE("profiler: calls on cuda:0 are also timed on its compute stream", "[device][profiler]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const Device gpu = Device::cuda(0);
  Tensor a = rt.full({2048, 2048}, 0.5, DType::f32, gpu), b = rt.full({2048, 2048}, 0.25, DType::f32, gpu);
  rt.call1("matmul", {a, b});  // cuBLAS's first call sets itself up: not profiled
  rt.profiler().begin();
  rt.call1("matmul", {a, b});
  rt.profiler().end();
  const std::vector<ProfileEvent> events = rt.profiler().events();
  auto find = [&](bool span) {
    return std::find_if(events.begin(), events.end(), [&](const ProfileEvent& e) {
      return e.name == "matmul" && e.span == span;
    });
  };
  REQUIRE(find(false) != events.end());
  REQUIRE(find(true) != events.end());
  const ProfileEvent& on_gpu = *find(true);
  CHECK(on_gpu.track == "cuda:0 compute stream");
  CHECK(on_gpu.device == gpu);
  // 17 GFLOP take the GPU well over a microsecond, and they run after the
  // host started queueing them (less the anchor's few microseconds).
  CHECK(on_gpu.total_ns() > 1000);
  CHECK(on_gpu.start_ns > find(false)->start_ns - 100000);
}

TEST_CASE("profiler: a loader's copies to cuda:0 are timed on its copy stream", "[device][profiler]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const Device gpu = Device::cuda(0);
  auto memory = std::dynamic_pointer_cast<CachingAllocator>(rt.allocator(gpu));
  REQUIRE(memory);
  auto stager = std::make_shared<data::DeviceStager>(rt.transfer_queue(gpu), memory);
  data::LoaderOptions options;
  options.batch_size = 64;
  options.num_workers = 1;
  const auto make = [&rt](int64_t, uint64_t) { return data::NamedTensors{{"x", rt.full({1 << 16}, 1.0)}}; };
  rt.profiler().begin();
  {
    data::Loader loader(256, options, make, rt.pinned_allocator(), stager, &rt.profiler());
    loader.start_epoch(0);
    while (auto batch = loader.next()) {
    }
  }
  rt.profiler().end();
  const std::vector<ProfileEvent> events = rt.profiler().events();
  const auto copies = std::count_if(events.begin(), events.end(), [](const ProfileEvent& e) {
    return e.span && e.track == "cuda:0 copy stream" && e.name.rfind("batch ", 0) == 0;
  });
  CHECK(copies == 4);
}
