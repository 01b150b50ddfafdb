// The profiler on cuda:0: a forward and backward there records each call
// on the GPU, forward and backward apart, each nested call inside its parent.
#include <algorithm>

#include "device_test_support.hpp"
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
