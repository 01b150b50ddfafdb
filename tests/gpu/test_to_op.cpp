// "to" between host tensors: runs on every machine.
#include <catch2/catch.hpp>

#include "device_test_support.hpp"
#include "kiln/error.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("to cpu copies every dtype into new storage", "[device]") {
  Runtime rt;
  for (DType t : kAllDTypes) {
    INFO(dtype_name(t));
    Tensor x = make_tensor(rt, {2, 3}, {0, 1, 2, 3, 1, 0}, t);
    Tensor y = to_device(rt, x, Device::cpu());
    CHECK(y.device() == Device::cpu());
    CHECK(y.dtype() == t);
    CHECK(y.shape() == x.shape());
    CHECK(y.storage() != x.storage());
    CHECK(host_bytes(rt, y) == host_bytes(rt, x));
  }
}

TEST_CASE("to makes a strided view contiguous", "[device]") {
  Runtime rt;
  Tensor x = make_tensor(rt, {2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor t = rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 1}});
  Tensor y = to_device(rt, t, Device::cpu());
  CHECK(y.is_contiguous());
  CHECK(y.shape() == Shape{3, 2});
  require_close(rt, y, {0, 3, 1, 4, 2, 5});
}

TEST_CASE("to cpu passes the gradient through", "[device][grad]") {
  Runtime rt;
  gradcheck(rt, "to", {random_tensor(rt, {2, 3})}, {{"device", std::string("cpu")}});

  Tensor x = random_tensor(rt, {4});
  x.set_requires_grad(true);
  Tensor y = to_device(rt, x, Device::cpu());
  rt.backward(y, make_tensor(rt, {4}, {1, 2, 3, 4}));
  REQUIRE(x.grad().defined());
  CHECK(x.grad().device() == Device::cpu());
  require_close(rt, x.grad(), {1, 2, 3, 4});
}

TEST_CASE("to rejects a device it cannot parse", "[device][errors]") {
  Runtime rt;
  try {
    rt.call1("to", {rt.full({2}, 1.0)}, {{"device", std::string("gpu0")}});
    FAIL("'gpu0' was accepted as a device");
  } catch (const Error& e) {
    CHECK(e.status() == Status::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("op 'to'") && Catch::Contains("'gpu0'") && Catch::Contains("cuda:N"));
  }
}
