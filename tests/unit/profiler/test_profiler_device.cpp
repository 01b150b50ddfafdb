// The device side of profiles: op calls on a GPU and input copies become
// spans of the device's time on tracks of their own, placed on the host's
// clock; a CPU call makes none, and a device that cannot be timed makes a
// profile without them. A fake device stands in for a GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>

#include "kiln/profiler/profile_report.hpp"
#include "kiln/profiler/profiler.hpp"
#include "kiln/tensor.hpp"
#include "support/fake_device_timeline.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

const ProfileEvent* find_event(const std::vector<ProfileEvent>& events, const std::string& name, bool span,
                               const std::string& track) {
  auto it = std::find_if(events.begin(), events.end(), [&](const ProfileEvent& e) {
    return e.name == name && e.span == span && e.track == track;
  });
  return it == events.end() ? nullptr : &*it;
}

void use_fake(Profiler& profiler, FakeDevice& fake) {
  profiler.set_device_timelines([&fake](Device d) { return std::make_unique<FakeTimeline>(d, fake); });
}

}  // namespace

TEST_CASE("profiler: a call on a GPU also records the GPU's time on its stream's track", "[profiler]") {
  FakeDevice fake;
  Profiler profiler;
  use_fake(profiler, fake);
  const Device gpu = Device::cuda(0);
  profiler.begin();
  {
    ProfiledCall outer(profiler, "linear", gpu, {});
    fake.queued = 0.004;  // kernels of linear before the nested call
    {
      ProfiledCall inner(profiler, "matmul", gpu, {});
      fake.queued = 0.010;
    }
  }
  {
    ProfiledCall on_cpu(profiler, "relu", Device::cpu(), {});
  }
  profiler.end();
  const std::vector<ProfileEvent> events = profiler.events();
  const ProfileEvent* linear = find_event(events, "linear", true, "cuda:0 compute stream");
  const ProfileEvent* matmul = find_event(events, "matmul", true, "cuda:0 compute stream");
  REQUIRE(linear);
  REQUIRE(matmul);
  CHECK(linear->device == gpu);
  CHECK(linear->phase == ProfilePhase::forward);
  // The device's times: matmul ran 10 ms, inside linear, which ran 14 ms
  // (and the host's moments between their marks, well under a millisecond
  // even in a sanitizer build).
  CHECK(matmul->total_ns() >= 10000000);
  CHECK(matmul->total_ns() < 11000000);
  CHECK(linear->total_ns() >= matmul->total_ns() + 4000000 - 1000);
  CHECK(linear->start_ns <= matmul->start_ns);
  CHECK(matmul->end_ns <= linear->end_ns);
  // Placed on the host's clock: the device finished after the host queued it.
  const ProfileEvent* host_linear = find_event(events, "linear", false, "");
  REQUIRE(host_linear);
  CHECK(linear->start_ns >= host_linear->start_ns - 1000);
  CHECK(linear->end_ns > host_linear->end_ns);
  // The host's calls are still the profile's op calls, the CPU's included.
  CHECK(find_event(events, "relu", false, ""));
  CHECK(std::none_of(events.begin(), events.end(),
                     [](const ProfileEvent& e) { return e.span && e.track.find("cpu") != std::string::npos; }));
  const std::vector<ProfileRow> rows = profile_summary(events);
  CHECK(std::count_if(rows.begin(), rows.end(), [](const ProfileRow& r) { return r.name == "matmul"; }) == 1);
  CHECK(fake.timelines == 1);
  CHECK(unreleased(fake) == 1);  // the anchor, kept with the profile
  // The trace names the device's track.
  CHECK(chrome_trace_json(events, profiler.thread_names()).find("\"cuda:0 compute stream\"") != std::string::npos);
}

TEST_CASE("profiler: a device span times work on a stream of its own track", "[profiler]") {
  FakeDevice fake;
  Profiler profiler;
  use_fake(profiler, fake);
  profiler.begin();
  {
    ProfiledDeviceSpan copy(profiler, Device::cuda(1), 7, "copy stream", "batch 3 of epoch 0");
    fake.queued = 0.002;
  }
  profiler.end();
  const std::vector<ProfileEvent> events = profiler.events();
  const ProfileEvent* copy = find_event(events, "batch 3 of epoch 0", true, "cuda:1 copy stream");
  REQUIRE(copy);
  CHECK(copy->total_ns() >= 2000000);
  CHECK(copy->total_ns() < 3000000);
  CHECK(unreleased(fake) == 1);  // the anchor, kept with the profile
}

TEST_CASE("profiler: a device that cannot be timed leaves the host's events only", "[profiler]") {
  Profiler profiler;
  int asked = 0;
  profiler.set_device_timelines([&asked](Device) -> std::unique_ptr<DeviceTimeline> {
    ++asked;
    throw std::runtime_error("no such device");
  });
  profiler.begin();
  for (int i = 0; i < 3; ++i) ProfiledCall call(profiler, "add", Device::cuda(0), {});
  profiler.end();
  const std::vector<ProfileEvent> events = profiler.events();
  CHECK(events.size() == 3);
  CHECK(std::none_of(events.begin(), events.end(), [](const ProfileEvent& e) { return e.span; }));
  CHECK(asked == 1);  // once per profile, not once per call
}

TEST_CASE("profiler: device work that ends after the profile is dropped, its marks released", "[profiler]") {
  FakeDevice fake;
  Profiler profiler;
  use_fake(profiler, fake);
  profiler.begin();
  {
    ProfiledDeviceSpan late(profiler, Device::cuda(0), 0, "copy stream", "late");
    profiler.end();
  }
  const std::vector<ProfileEvent> events = profiler.events();
  CHECK(std::none_of(events.begin(), events.end(), [](const ProfileEvent& e) { return e.name == "late"; }));
  profiler.begin();  // a new profile frees the old one's anchor
  profiler.end();
  CHECK(all_released(fake));
}
