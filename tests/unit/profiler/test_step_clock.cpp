// The split of a step's time: on the host's clock, and on a device's
// timeline, where each phase gets the device's time between its marks (a
// fake device here, which runs on the host's clock as a GPU's stream
// would: work queued by the host finishes later).
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "kiln/profiler/step_clock.hpp"
#include "support/fake_device_timeline.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Phases {
  double input = 0, forward = 0, backward = 0, other = 0;
  double sum() const { return input + forward + backward + other; }
};

}  // namespace

TEST_CASE("step clock: on the host, each phase gets the time since the last charge", "[profiler]") {
  Profiler profiler;
  Phases p;
  const auto start = std::chrono::steady_clock::now();
  StepClock clock(profiler, nullptr);
  sleep_ms(4);
  clock.charge(&p.input, "input wait");
  sleep_ms(8);
  clock.charge(&p.forward, "forward");
  clock.charge(&p.other, "other");
  const double step = clock.finish(&p.other);
  const double wall = seconds_since(start);
  CHECK(p.input >= 0.004);
  CHECK(p.forward >= 0.008);
  CHECK(p.sum() == Approx(step).epsilon(1e-12));
  CHECK(step <= wall);
}

TEST_CASE("step clock: on a device, each phase gets the device's time between its marks", "[profiler]") {
  FakeDevice fake;
  FakeTimeline device(Device::cuda(0), fake);
  Profiler profiler;
  Phases p;
  const auto start = std::chrono::steady_clock::now();
  {
    StepClock clock(profiler, &device);
    sleep_ms(3);  // the host waits for input while the device idles
    clock.charge(&p.input, "input wait");
    fake.queued = 0.020;  // forward: queued at once, runs 20 ms
    clock.charge(&p.forward, "forward");
    fake.queued = 0.030;  // backward: 30 ms more, queued behind it
    clock.charge(&p.backward, "backward");
    clock.charge(&p.other, "other");
    const double step = clock.finish(&p.other);
    const double wall = seconds_since(start);
    CHECK(p.input >= 0.003);
    // The host spent microseconds on forward and backward; the device 20 and 30 ms.
    CHECK(p.forward >= 0.020);
    CHECK(p.forward < 0.020 + p.input);
    CHECK(p.backward == Approx(0.030).epsilon(1e-9));
    CHECK(p.sum() == Approx(step).epsilon(1e-12));
    // The step waited for the device: it lasted as long as its work.
    CHECK(step >= 0.053);
    CHECK(step <= wall);
    CHECK(step > 0.98 * wall);
  }
  CHECK(all_released(fake));
}

TEST_CASE("step clock: marks that cannot be read leave the host's times", "[profiler]") {
  FakeDevice fake;
  FakeTimeline device(Device::cuda(0), fake);
  Profiler profiler;
  Phases p;
  {
    StepClock clock(profiler, &device);
    sleep_ms(2);
    clock.charge(&p.input, "input wait");
    fake.queued = 0.010;
    clock.charge(&p.forward, "forward");
    fake.unreadable = true;
    const double step = clock.finish(&p.other);
    CHECK(p.input >= 0.002);
    CHECK(p.forward < 0.010);  // the host only queued it
    // The wait for the device is time outside the phases.
    CHECK(p.other >= 0.009);
    CHECK(p.sum() == Approx(step).epsilon(1e-12));
  }
  CHECK(all_released(fake));
}

TEST_CASE("step clock: a step that ends early releases its marks", "[profiler]") {
  FakeDevice fake;
  FakeTimeline device(Device::cuda(0), fake);
  Profiler profiler;
  double forward = 0;
  {
    StepClock clock(profiler, &device);
    clock.charge(&forward, "forward");
  }
  CHECK(fake.marks.size() == 2);
  CHECK(all_released(fake));
}
