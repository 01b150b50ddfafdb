// Comparisons (eq, ne, lt, le, gt, ge) and logical ops (logical_and,
// logical_or, logical_not): bool outputs for every input dtype, NumPy
// broadcasting, IEEE rules for NaN, non-zero as true, and no gradient.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using Predicate = std::function<bool(double, double)>;

const std::vector<std::pair<const char*, Predicate>> kPredicates = {
    {"eq", std::equal_to<double>()},
    {"ne", std::not_equal_to<double>()},
    {"lt", std::less<double>()},
    {"le", std::less_equal<double>()},
    {"gt", std::greater<double>()},
    {"ge", std::greater_equal<double>()},
    {"logical_and", [](double a, double b) { return a != 0 && b != 0; }},
    {"logical_or", [](double a, double b) { return a != 0 || b != 0; }},
};

std::vector<double> flags(const std::vector<bool>& v) {
  std::vector<double> out;
  for (bool b : v) out.push_back(b ? 1.0 : 0.0);
  return out;
}

}  // namespace

TEST_CASE("comparisons and logical ops broadcast to bool in every dtype", "[elementwise]") {
  Runtime rt;
  std::vector<double> a = {0, 1, 2, 3, 1, 0, 2, 2, 3, 1, 0, 1};  // [3, 1, 4]
  std::vector<double> b = {1, 2, 0, 3};                          // [4], expanded to [3, 4] (stride 0)
  for (DType dtype : kAllDTypes) {
    std::vector<double> va = a, vb = b;
    if (dtype == DType::boolean)
      for (std::vector<double>* v : {&va, &vb})
        for (double& x : *v) x = x != 0 ? 1 : 0;
    const Tensor ta = make_tensor(rt, {3, 1, 4}, va, dtype);
    const Tensor tb = rt.call1("expand", {make_tensor(rt, {4}, vb, dtype)}, {{"shape", std::vector<int64_t>{3, 4}}});
    const Tensor two = make_tensor(rt, {}, {dtype == DType::boolean ? 1.0 : 2.0}, dtype);
    for (const auto& [name, f] : kPredicates) {
      INFO(name << " in " << dtype_name(dtype));
      const Tensor out = rt.call1(name, {ta, tb});
      CHECK(out.dtype() == DType::boolean);
      CHECK(out.shape() == Shape{3, 3, 4});
      std::vector<bool> want;  // out[r, k, j] = f(a[r, 0, j], b[j])
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k)
          for (int j = 0; j < 4; ++j) want.push_back(f(va[size_t(r * 4 + j)], vb[size_t(j)]));
      require_close(rt, out, flags(want), 0, 0);
      // A one-element operand on either side.
      std::vector<bool> left, right;
      for (double x : va) {
        right.push_back(f(x, values(rt, two)[0]));
        left.push_back(f(values(rt, two)[0], x));
      }
      require_close(rt, rt.call1(name, {ta, two}), flags(right), 0, 0);
      require_close(rt, rt.call1(name, {two, ta}), flags(left), 0, 0);
    }
  }
}

TEST_CASE("comparisons follow IEEE rules for NaN, infinities and signed zeros", "[elementwise]") {
  Runtime rt;
  const std::vector<double> a = {kNaN, kNaN, 1, kInf, -kInf, -0.0, 1};
  const std::vector<double> b = {kNaN, 1, kNaN, kInf, kInf, 0.0, 2};
  for (DType dtype : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    const Tensor ta = make_tensor(rt, {7}, a, dtype), tb = make_tensor(rt, {7}, b, dtype);
    for (const auto& [name, f] : kPredicates) {
      INFO(name << " in " << dtype_name(dtype));
      std::vector<bool> want;
      for (size_t i = 0; i < a.size(); ++i) want.push_back(f(a[i], b[i]));
      require_close(rt, rt.call1(name, {ta, tb}), flags(want), 0, 0);
    }
  }
}

TEST_CASE("logical_not takes every dtype, NaN is true", "[elementwise]") {
  Runtime rt;
  for (DType dtype : kAllDTypes) {
    INFO(dtype_name(dtype));
    const bool floating = is_floating(dtype);
    const Tensor x = make_tensor(rt, {2, 2}, {0, 1, floating ? kNaN : 0, dtype == DType::boolean ? 1.0 : 7.0}, dtype);
    const Tensor y = rt.call1("logical_not", {x});
    CHECK(y.dtype() == DType::boolean);
    CHECK(y.shape() == x.shape());
    require_close(rt, y, {1, 0, floating ? 0.0 : 1.0, 0}, 0, 0);
    const Tensor t = rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 1}});
    require_close(rt, rt.call1("logical_not", {t}), {1, floating ? 0.0 : 1.0, 0, 0}, 0, 0);
  }
}

TEST_CASE("comparisons and logical ops carry no gradient", "[elementwise][grad]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {5});
  x.set_requires_grad(true);
  for (const auto& [name, f] : kPredicates) {
    INFO(name);
    CHECK_FALSE(rt.call1(name, {x, x}).requires_grad());
  }
  CHECK_FALSE(rt.call1("logical_not", {x}).requires_grad());
}

TEST_CASE("comparisons need one dtype and shapes that broadcast", "[elementwise]") {
  Runtime rt;
  require_error([&] { rt.call1("eq", {rt.full({2}, 1.0, DType::f32), rt.full({2}, 1.0, DType::i64)}); },
                Status::dtype_mismatch, {"op 'eq'", "i64", "f32"});
  require_error([&] { rt.call1("logical_and", {rt.full({2, 3}, 1.0), rt.full({4}, 1.0)}); }, Status::shape_mismatch,
                {"logical_and", "[2, 3]", "[4]"});
}
