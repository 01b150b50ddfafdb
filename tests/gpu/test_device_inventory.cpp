// What the runtime reports about GPUs, and how it refuses a device it cannot
// use. Runs on every machine: with a GPU the refused device is one past the
// last; without one it is cuda:0, and the message must carry the reason.
#include <catch2/catch.hpp>

#include "device_test_support.hpp"
#include "kiln/error.hpp"
#include "kiln/memory/cuda.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// Runs `use` and checks it fails with device_mismatch and a message that
// names the device and why it cannot be used.
template <class Fn>
void require_refused(const Runtime& rt, Device device, Fn&& use) {
  try {
    use();
    FAIL("using " << to_string(device) << " did not fail");
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.status() == Status::device_mismatch);
    CHECK_THAT(e.what(), Catch::Contains(to_string(device)));
    if (rt.devices().cuda_device_count == 0) CHECK_THAT(e.what(), Catch::Contains(rt.devices().cuda_unavailable_reason));
    else CHECK_THAT(e.what(), Catch::Contains("does not exist"));
  }
}

}  // namespace

TEST_CASE("the runtime reports its GPUs or why there are none", "[device]") {
  Runtime rt;
  const DeviceInventory& inv = rt.devices();
#ifdef KILN_WITH_CUDA
  CHECK(built_with_cuda());
#else
  CHECK_FALSE(built_with_cuda());
  CHECK(inv.cuda_device_count == 0);
#endif
  CHECK(inv.cuda_device_count >= 0);
  if (inv.cuda_device_count == 0) {
    CHECK_FALSE(inv.cuda_unavailable_reason.empty());
    WARN("no GPU: " << inv.cuda_unavailable_reason);
  } else {
    CHECK(inv.cuda_unavailable_reason.empty());
  }
}

TEST_CASE("an unusable GPU is refused with the reason", "[device]") {
  Runtime rt;
  const Device missing = Device::cuda(rt.devices().cuda_device_count);
  require_refused(rt, missing, [&] { rt.full({2, 3}, 1.0, DType::f32, missing); });
  require_refused(rt, missing, [&] { to_device(rt, rt.full({2, 3}, 1.0), missing); });
  require_refused(rt, missing, [&] { rt.allocator(missing); });
}
