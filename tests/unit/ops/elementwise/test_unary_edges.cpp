// The unary functions at their edges, in every floating dtype: 0 and -0,
// negatives, half-way points for the rounding functions, the thresholds of
// softplus and hardswish, large values, ±inf and NaN, against a plain double
// reference of the same inputs (rounded to the dtype, as is the reference's
// result). Also: integer abs and sign, derivatives at kinks, and the zero
// gradient of the piecewise constant functions.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"
#include "unary_references.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

const std::vector<double> kEdges = {0.0,  -0.0, 0.5,  -0.5, 1.5, -1.5, 2.5, -2.5, 3.5,   -3.5,  0.49999997,
                                    1,    -1,   2,    -2,   3,   -3,   4,   -4,   17,    20,    20.5,
                                    25,   -20,  -30,  100,  -100, 1e-6, -1e-6, 1e30, -1e30, kInf, -kInf,
                                    kNaN};

struct EdgeCase {
  const char* name;
  std::vector<std::pair<std::string_view, AttrValue>> attrs;
  std::function<double(double)> reference;
};

const std::vector<EdgeCase> kEdgeCases = {
    {"abs", {}, [](double x) { return std::abs(x); }},
    {"sign", {}, sign_reference},
    {"floor", {}, [](double x) { return std::floor(x); }},
    {"ceil", {}, [](double x) { return std::ceil(x); }},
    {"round", {}, [](double x) { return std::nearbyint(x); }},
    {"trunc", {}, [](double x) { return std::trunc(x); }},
    {"sin", {}, [](double x) { return std::sin(x); }},
    {"cos", {}, [](double x) { return std::cos(x); }},
    {"rsqrt", {}, [](double x) { return 1 / std::sqrt(x); }},
    {"erf", {}, [](double x) { return std::erf(x); }},
    {"log1p", {}, [](double x) { return std::log1p(x); }},
    {"expm1", {}, [](double x) { return std::expm1(x); }},
    {"softplus", {}, softplus_reference(1, 20)},
    {"softplus", {{"beta", 2.0}, {"threshold", 5.0}}, softplus_reference(2, 5)},
    {"softplus", {{"beta", 0.5}}, softplus_reference(0.5, 20)},
    {"hardswish", {}, hardswish_reference},
    {"mish", {}, mish_reference},
};

// |actual - expected| <= atol + rtol * |expected| per dtype; the 16-bit
// floats are rounded once more on output.
std::pair<double, double> tolerances(DType t) {
  switch (t) {
    case DType::f64: return {1e-12, 1e-12};
    case DType::f32: return {1e-6, 1e-5};
    case DType::f16: return {1e-5, 1e-3};
    default: return {1e-5, 8e-3};
  }
}

}  // namespace

TEST_CASE("unary functions at their edges match a reference in every floating dtype", "[elementwise]") {
  Runtime rt;
  const Shape shape{int64_t(kEdges.size())};
  for (const EdgeCase& u : kEdgeCases) {
    const OpDef& op = rt.op(u.name);
    const Attrs attrs = op.make_attrs(u.attrs);
    for (DType dtype : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
      INFO(u.name << " in " << dtype_name(dtype));
      const Tensor x = make_tensor(rt, shape, kEdges, dtype);
      std::vector<double> expected;
      for (double v : values(rt, x)) expected.push_back(u.reference(v));
      // The reference's result as the dtype holds it (overflow to inf included).
      expected = values(rt, make_tensor(rt, shape, expected, dtype));
      const Tensor y = rt.call1(op, {x}, attrs);
      CHECK(y.dtype() == dtype);
      const auto [atol, rtol] = tolerances(dtype);
      require_close(rt, y, expected, atol, rtol);
    }
  }
}

TEST_CASE("round goes half-way cases to the even neighbour", "[elementwise]") {
  Runtime rt;
  for (DType dtype : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    INFO(dtype_name(dtype));
    const Tensor x = make_tensor(rt, {8}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.75, -3.25}, dtype);
    require_close(rt, rt.call1("round", {x}), {0, 2, 2, -0.0, -2, -2, 1, -3}, 0, 0);
  }
}

TEST_CASE("abs and sign take integers, sign takes bool", "[elementwise]") {
  Runtime rt;
  const double i32_min = double(std::numeric_limits<int32_t>::min());
  const Tensor i32 = make_tensor(rt, {5}, {i32_min, -7, 0, 1, 9}, DType::i32);
  CHECK(rt.call1("abs", {i32}).dtype() == DType::i32);
  require_close(rt, rt.call1("abs", {i32}), {i32_min, 7, 0, 1, 9}, 0, 0);  // wraps, as in PyTorch
  require_close(rt, rt.call1("sign", {i32}), {-1, -1, 0, 1, 1}, 0, 0);
  const Tensor i64 = make_tensor(rt, {4}, {-5e12, -1, 0, 3}, DType::i64);
  require_close(rt, rt.call1("abs", {i64}), {5e12, 1, 0, 3}, 0, 0);
  require_close(rt, rt.call1("sign", {i64}), {-1, -1, 0, 1}, 0, 0);
  const Tensor u8 = make_tensor(rt, {3}, {0, 3, 255}, DType::u8);
  require_close(rt, rt.call1("abs", {u8}), {0, 3, 255}, 0, 0);
  require_close(rt, rt.call1("sign", {u8}), {0, 1, 1}, 0, 0);
  const Tensor flags = make_tensor(rt, {2}, {0, 1}, DType::boolean);
  CHECK(rt.call1("sign", {flags}).dtype() == DType::boolean);
  require_close(rt, rt.call1("sign", {flags}), {0, 1}, 0, 0);
  require_error([&] { rt.call1("abs", {flags}); }, Status::dtype_mismatch, {"op 'abs'", "bool"});
  require_error([&] { rt.call1("floor", {i32}); }, Status::dtype_mismatch, {"op 'floor'", "i32"});
}

TEST_CASE("derivatives at kinks follow PyTorch in f32 (oneDNN) and f64", "[elementwise]") {
  Runtime rt;
  struct Kink {
    const char* backward;
    std::vector<double> x, dx;
  };
  const Kink kinks[] = {
      {"abs_backward", {0, -0.0, -2, 2}, {0, 0, -1, 1}},
      {"hardswish_backward", {-3, 3, -4, 4, 0}, {-0.5, 1.5, 0, 1, 0.5}},
      {"softplus_backward", {20, 21, 0}, {1 / (1 + std::exp(-20.0)), 1, 0.5}},
      {"mish_backward", {0}, {0.6}},  // tanh(log 2) + 0
  };
  for (const Kink& k : kinks) {
    for (DType dtype : {DType::f32, DType::f64}) {
      INFO(k.backward << " in " << dtype_name(dtype));
      const Shape shape{int64_t(k.x.size())};
      const Tensor g = rt.full(shape, 1.0, dtype);
      require_close(rt, rt.call1(k.backward, {g, make_tensor(rt, shape, k.x, dtype)}), k.dx, 1e-6, 1e-6);
    }
  }
}

TEST_CASE("piecewise constant functions have a zero gradient and no backward op", "[elementwise][grad]") {
  Runtime rt;
  for (const char* name : {"floor", "ceil", "round", "trunc", "sign"}) {
    INFO(name);
    CHECK(rt.registry().find(std::string(name) + "_backward") == nullptr);
    Tensor x = make_tensor(rt, {4}, {-1.5, 0.25, 2.5, 7});
    x.set_requires_grad(true);
    const Tensor y = rt.call1(name, {x});
    CHECK(y.requires_grad());
    // Zeros whatever the incoming gradient, inf and NaN included.
    rt.backward(y, make_tensor(rt, {4}, {1, kInf, kNaN, -2}));
    REQUIRE(x.grad().defined());
    require_close(rt, x.grad(), {0, 0, 0, 0}, 0, 0);
  }
}
