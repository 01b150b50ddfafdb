// minimum, maximum and remainder beyond the broadcasting tests of
// test_binary_ops.cpp: NaN propagation, ties and their halved gradients,
// integers and bool, and remainder's signs (Python's %), infinities and
// division by zero.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr DType kFloatTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

// Runs op on leaves a and b (f64) and back-propagates ones; returns both gradients.
std::pair<std::vector<double>, std::vector<double>> gradients(Runtime& rt, const char* op, const Tensor& a0,
                                                              const Tensor& b0) {
  Tensor a = rt.call1("copy", {a0}), b = rt.call1("copy", {b0});
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  const Tensor y = rt.call1(op, {a, b});
  rt.backward(y, rt.full(y.shape(), 1.0, y.dtype()));
  return {values(rt, a.grad()), values(rt, b.grad())};
}

}  // namespace

TEST_CASE("maximum and minimum propagate NaN in every floating dtype", "[elementwise]") {
  Runtime rt;
  for (DType dtype : kFloatTypes) {
    INFO(dtype_name(dtype));
    const Tensor a = make_tensor(rt, {6}, {kNaN, 1, kNaN, -kInf, 2, -0.0}, dtype);
    const Tensor b = make_tensor(rt, {6}, {1, kNaN, kNaN, 3, kInf, 0.0}, dtype);
    require_close(rt, rt.call1("maximum", {a, b}), {kNaN, kNaN, kNaN, 3, kInf, 0}, 0, 0);
    require_close(rt, rt.call1("minimum", {a, b}), {kNaN, kNaN, kNaN, -kInf, 2, 0}, 0, 0);
  }
}

TEST_CASE("maximum and minimum take integers and bool", "[elementwise]") {
  Runtime rt;
  for (DType dtype : {DType::i32, DType::i64, DType::u8}) {
    INFO(dtype_name(dtype));
    const Tensor a = make_tensor(rt, {2, 2}, {1, 200, 7, 0}, dtype);
    const Tensor b = make_tensor(rt, {2}, {5, 7}, dtype);
    CHECK(rt.call1("maximum", {a, b}).dtype() == dtype);
    require_close(rt, rt.call1("maximum", {a, b}), {5, 200, 7, 7}, 0, 0);
    require_close(rt, rt.call1("minimum", {a, b}), {1, 7, 5, 0}, 0, 0);
  }
  const Tensor p = make_tensor(rt, {4}, {0, 0, 1, 1}, DType::boolean), q = make_tensor(rt, {4}, {0, 1, 0, 1}, DType::boolean);
  require_close(rt, rt.call1("maximum", {p, q}), {0, 1, 1, 1}, 0, 0);
  require_close(rt, rt.call1("minimum", {p, q}), {0, 0, 0, 1}, 0, 0);
}

TEST_CASE("maximum and minimum split the gradient in halves at ties", "[elementwise][grad]") {
  Runtime rt;
  const Tensor a = make_tensor(rt, {4}, {1, 2, 3, kNaN});
  const Tensor b = make_tensor(rt, {4}, {1, 5, 0, 1});
  // A NaN is chosen by both and compares false: both operands get the whole.
  const auto [max_a, max_b] = gradients(rt, "maximum", a, b);
  require_close(max_a, {0.5, 0, 1, 1}, 0, 0);
  require_close(max_b, {0.5, 1, 0, 1}, 0, 0);
  const auto [min_a, min_b] = gradients(rt, "minimum", a, b);
  require_close(min_a, {0.5, 1, 0, 1}, 0, 0);
  require_close(min_b, {0.5, 0, 1, 1}, 0, 0);
  // Broadcast: b's single element ties with two of a's and wins once.
  const auto [ga, gb] = gradients(rt, "maximum", make_tensor(rt, {2, 2}, {2, 2, 1, 3}), make_tensor(rt, {1}, {2}));
  require_close(ga, {0.5, 0.5, 0, 1}, 0, 0);
  require_close(gb, {2}, 0, 0);
}

TEST_CASE("remainder has the sign of the divisor, as Python's %", "[elementwise]") {
  Runtime rt;
  const std::vector<double> a = {-7, 7, -7, 7, 7.5, -7.5, 0, 5, -1, 1, kInf, 3, 4};
  const std::vector<double> b = {3, -3, -3, 3, 2, 2, -2, 0, kInf, -kInf, 2, kNaN, 2};
  const std::vector<double> want = {2, -2, -1, 1, 1.5, 0.5, 0, kNaN, kInf, -kInf, kNaN, kNaN, 0};
  const Shape shape{int64_t(a.size())};
  for (DType dtype : kFloatTypes) {
    INFO(dtype_name(dtype));
    require_close(rt, rt.call1("remainder", {make_tensor(rt, shape, a, dtype), make_tensor(rt, shape, b, dtype)}),
                  want, 0, 0);
  }
  for (DType dtype : {DType::i32, DType::i64}) {
    INFO(dtype_name(dtype));
    const Tensor x = make_tensor(rt, {6}, {-7, 7, -7, 7, 0, -8}, dtype);
    const Tensor y = make_tensor(rt, {6}, {3, -3, -3, 3, -2, 4}, dtype);
    require_close(rt, rt.call1("remainder", {x, y}), {2, -2, -1, 1, 0, 0}, 0, 0);
    require_error([&] { rt.call1("remainder", {x, make_tensor(rt, {2}, {0, 0}, dtype)}); },
                  Status::shape_mismatch, {"remainder"});
    require_error([&] { rt.call1("remainder", {x, make_tensor(rt, {1}, {0}, dtype)}); }, Status::invalid_argument,
                  {"op 'remainder'", "division by zero"});
  }
  // The most negative integer over -1 would overflow the quotient.
  const double i32_min = double(std::numeric_limits<int32_t>::min());
  require_close(rt,
                rt.call1("remainder", {make_tensor(rt, {1}, {i32_min}, DType::i32), make_tensor(rt, {1}, {-1}, DType::i32)}),
                {0}, 0, 0);
}

TEST_CASE("remainder's gradient is 1 for a and -floor(a / b) for b", "[elementwise][grad]") {
  Runtime rt;
  const Tensor a = make_tensor(rt, {2, 3}, {-7.3, 7.3, 2.2, -0.4, 9.1, 5.5});
  const Tensor b = make_tensor(rt, {3}, {3, -3, 0.7});
  const auto [ga, gb] = gradients(rt, "remainder", a, b);
  require_close(ga, {1, 1, 1, 1, 1, 1}, 0, 0);
  require_close(gb, {-(std::floor(-7.3 / 3) + std::floor(-0.4 / 3)), -(std::floor(7.3 / -3) + std::floor(9.1 / -3)),
                     -(std::floor(2.2 / 0.7) + std::floor(5.5 / 0.7))},
                1e-12, 0);
  gradcheck(rt, "remainder", {a, b});
}
