#include <catch2/catch.hpp>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

std::vector<Tensor> dropout(Runtime& rt, const Tensor& x, double p, bool training = true) {
  return rt.call("dropout", {x}, {{"p", p}, {"training", training}});
}

}  // namespace

TEST_CASE("dropout zeroes a fraction p and scales the rest", "[elementwise]") {
  Runtime rt;
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor x = random_tensor(rt, {200, 101}, dtype, 0.5, 1.5);
    const std::vector<Tensor> out = dropout(rt, x, 0.3);
    REQUIRE(out.size() == 2);
    CHECK(out[0].dtype() == dtype);
    CHECK(out[1].dtype() == DType::u8);
    const std::vector<double> xv = values(rt, x), yv = values(rt, out[0]), mv = values(rt, out[1]);
    double kept = 0;
    std::vector<double> expected(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) {
      REQUIRE((mv[i] == 0 || mv[i] == 1));
      kept += mv[i];
      expected[i] = xv[i] * mv[i] / 0.7;
    }
    require_close(yv, expected, 1e-6, 1e-5);
    CHECK(kept / double(xv.size()) == Approx(0.7).margin(0.01));
  }
}

TEST_CASE("dropout in eval mode or with p = 0 passes the input through", "[elementwise]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {3, 4});
  for (const std::vector<Tensor>& out : {dropout(rt, x, 0.5, false), dropout(rt, x, 0.0)}) {
    CHECK_FALSE(out[0].same(x));
    require_close(rt, out[0], values(rt, x));
    require_close(rt, out[1], std::vector<double>(12, 1.0));
  }
}

TEST_CASE("dropout is reproducible across thread counts", "[elementwise]") {
  std::vector<std::vector<double>> results;
  for (int threads : {1, 4}) {
    Runtime rt(RuntimeOptions{.num_threads = threads});
    rt.manual_seed(99);
    Tensor x = rt.full({300, 301}, 1.0);
    results.push_back(values(rt, dropout(rt, x, 0.5)[1]));
  }
  CHECK(results[0] == results[1]);
}

TEST_CASE("dropout gradient is the mask scaled by 1/(1-p)", "[elementwise]") {
  Runtime rt;
  for (bool training : {true, false}) {
    // A fixed seed per call makes the op a deterministic function of x.
    gradcheck_fn(
        rt,
        [&](const std::vector<Tensor>& in) {
          rt.manual_seed(3);
          return dropout(rt, in[0], 0.4, training)[0];
        },
        {random_tensor(rt, {4, 5})});
  }
}

TEST_CASE("dropout rejects p outside 0 to 1 and integer input", "[elementwise]") {
  Runtime rt;
  for (double p : {1.0, -0.1}) {
    try {
      dropout(rt, rt.full({2}, 1.0), p);
      FAIL("dropout accepted p = " << p);
    } catch (const Error& e) {
      CHECK(e.status() == Status::invalid_argument);
      CHECK_THAT(e.what(), Catch::Contains("op 'dropout'") && Catch::Contains("[0, 1)"));
    }
  }
  try {
    dropout(rt, rt.full({2}, 1.0, DType::i64), 0.5);
    FAIL("dropout accepted an integer tensor");
  } catch (const Error& e) {
    CHECK(e.status() == Status::dtype_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("i64"));
  }
}
