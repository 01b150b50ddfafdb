#include <catch2/catch.hpp>

#include <cmath>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

struct Moments {
  double mean, std;
};

Moments moments(const std::vector<double>& v) {
  double sum = 0, sq = 0;
  for (double x : v) sum += x;
  const double mean = sum / double(v.size());
  for (double x : v) sq += (x - mean) * (x - mean);
  return {mean, std::sqrt(sq / double(v.size()))};
}

std::vector<double> sample(int threads, const char* op, DType dtype, NamedAttrs attrs = {}) {
  Runtime rt(RuntimeOptions{.num_threads = threads});
  rt.manual_seed(1234);
  std::vector<std::pair<std::string_view, AttrValue>> all(attrs.begin(), attrs.end());
  all.emplace_back("shape", std::vector<int64_t>{300, 301});  // odd count: partial Philox blocks and pairs
  all.emplace_back("dtype", dtype);
  const OpDef& def = rt.op(op);
  return values(rt, rt.call1(def, std::span<const Tensor>(), def.make_attrs(all)));
}

}  // namespace

TEST_CASE("zeros, ones and fill make constant tensors", "[elementwise]") {
  Runtime rt;
  for (DType dtype : {DType::f32, DType::f64, DType::bf16, DType::i64, DType::u8, DType::boolean}) {
    Tensor z = rt.call1("zeros", {}, {{"shape", std::vector<int64_t>{2, 3}}, {"dtype", dtype}});
    CHECK(z.shape() == Shape{2, 3});
    CHECK(z.dtype() == dtype);
    require_close(rt, z, std::vector<double>(6, 0.0));
    require_close(rt, rt.call1("ones", {}, {{"shape", std::vector<int64_t>{4}}, {"dtype", dtype}}),
                  std::vector<double>(4, 1.0));
  }
  CHECK(rt.call1("zeros", {}, {{"shape", std::vector<int64_t>{3}}}).dtype() == DType::f32);
  Tensor x = rt.call1("transpose", {random_tensor(rt, {2, 3})}, {{"dim0", 0}, {"dim1", 1}});
  Tensor f = rt.call1("fill", {x}, {{"value", 2.5}});
  CHECK(f.shape() == Shape{3, 2});
  CHECK(f.dtype() == DType::f64);
  require_close(rt, f, std::vector<double>(6, 2.5));
  x = x.detach();
  x.set_requires_grad(true);
  CHECK_FALSE(rt.call1("fill", {x}, {{"value", 1.0}}).requires_grad());
}

TEST_CASE("arange counts from start by step up to end", "[elementwise]") {
  Runtime rt;
  Tensor a = rt.call1("arange", {}, {{"end", 5.0}});
  CHECK(a.dtype() == DType::i64);
  require_close(rt, a, {0, 1, 2, 3, 4});
  require_close(rt, rt.call1("arange", {}, {{"start", 1.0}, {"end", 2.0}, {"step", 0.25}, {"dtype", DType::f32}}),
                {1, 1.25, 1.5, 1.75});
  require_close(rt, rt.call1("arange", {}, {{"start", 5.0}, {"end", -1.0}, {"step", -2.0}, {"dtype", DType::f64}}),
                {5, 3, 1});
  CHECK(rt.call1("arange", {}, {{"start", 3.0}, {"end", 1.0}}).numel() == 0);
  try {
    rt.call1("arange", {}, {{"end", 3.0}, {"step", 0.0}});
    FAIL("arange accepted a zero step");
  } catch (const Error& e) {
    CHECK(e.status() == Status::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("op 'arange'") && Catch::Contains("step"));
  }
}

TEST_CASE("rand and randn are reproducible across thread counts", "[elementwise]") {
  for (const char* op : {"rand", "randn"}) {
    for (DType dtype : {DType::f32, DType::f64, DType::bf16}) {
      INFO(op << " " << dtype_name(dtype));
      const std::vector<double> one = sample(1, op, dtype), four = sample(4, op, dtype);
      CHECK(one == four);
    }
  }
  Runtime rt;
  rt.manual_seed(5);
  Tensor a = rt.call1("rand", {}, {{"shape", std::vector<int64_t>{8}}});
  Tensor b = rt.call1("rand", {}, {{"shape", std::vector<int64_t>{8}}});
  CHECK(values(rt, a) != values(rt, b));  // each call takes fresh counters
  rt.manual_seed(5);
  CHECK(values(rt, rt.call1("rand", {}, {{"shape", std::vector<int64_t>{8}}})) == values(rt, a));
}

TEST_CASE("rand and randn have the requested distribution", "[elementwise]") {
  for (DType dtype : {DType::f32, DType::f64}) {
    const std::vector<double> u = sample(2, "rand", dtype, {{"low", -1.0}, {"high", 3.0}});
    const Moments mu = moments(u);
    CHECK(mu.mean == Approx(1.0).margin(0.02));
    CHECK(mu.std == Approx(4.0 / std::sqrt(12.0)).margin(0.02));
    for (double x : u) REQUIRE((x >= -1.0 && x < 3.0));
    const Moments mn = moments(sample(2, "randn", dtype, {{"mean", 2.0}, {"std", 0.5}}));
    CHECK(mn.mean == Approx(2.0).margin(0.01));
    CHECK(mn.std == Approx(0.5).margin(0.01));
  }
}

TEST_CASE("random ops reject integer dtypes", "[elementwise]") {
  Runtime rt;
  try {
    rt.call1("randn", {}, {{"shape", std::vector<int64_t>{2}}, {"dtype", DType::i32}});
    FAIL("randn accepted an integer dtype");
  } catch (const Error& e) {
    CHECK(e.status() == Status::dtype_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("op 'randn'") && Catch::Contains("i32"));
  }
  try {
    rt.call1("zeros", {}, {{"shape", std::vector<int64_t>{-2}}});
    FAIL("zeros accepted a negative dimension");
  } catch (const Error& e) {
    CHECK(e.status() == Status::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("op 'zeros'"));
  }
}
