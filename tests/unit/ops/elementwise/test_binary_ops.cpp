#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <functional>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// The reference: out[i] = fn(a[ia], b[ib]) with NumPy broadcasting, written
// from index arithmetic alone.
std::vector<double> broadcast_reference(const std::vector<double>& a, const Shape& sa, const std::vector<double>& b,
                                        const Shape& sb, const Shape& out,
                                        const std::function<double(double, double)>& fn) {
  std::vector<double> r(size_t(out.numel()));
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t rest = i, ia = 0, ib = 0, ma = 1, mb = 1;
    for (int d = out.rank() - 1; d >= 0; --d) {
      const int64_t idx = rest % out[d];
      rest /= out[d];
      const int da = d - (out.rank() - sa.rank()), db = d - (out.rank() - sb.rank());
      if (da >= 0) {
        ia += (sa[da] == 1 ? 0 : idx) * ma;
        ma *= sa[da];
      }
      if (db >= 0) {
        ib += (sb[db] == 1 ? 0 : idx) * mb;
        mb *= sb[db];
      }
    }
    r[size_t(i)] = fn(a[size_t(ia)], b[size_t(ib)]);
  }
  return r;
}

const std::vector<std::pair<const char*, std::function<double(double, double)>>> kBinary = {
    {"add", std::plus<double>()},
    {"sub", std::minus<double>()},
    {"mul", std::multiplies<double>()},
    {"div", std::divides<double>()},
    {"maximum", [](double a, double b) { return std::max(a, b); }},
    {"minimum", [](double a, double b) { return std::min(a, b); }},
    {"remainder", [](double a, double b) { return a - b * std::floor(a / b); }}};

const std::vector<std::pair<Shape, Shape>> kShapePairs = {
    {{2, 3}, {2, 3}}, {{2, 3}, {1}}, {{1}, {2, 3}}, {{4, 1, 3}, {5, 1}}, {{3}, {2, 3}}, {{2, 1}, {1, 3}}, {{7}, {7}}};

}  // namespace

TEST_CASE("binary ops broadcast and match a reference in f32 and f64", "[elementwise]") {
  Runtime rt;
  for (DType dtype : {DType::f32, DType::f64}) {
    for (const auto& [name, fn] : kBinary) {
      for (const auto& [sa, sb] : kShapePairs) {
        Tensor a = random_tensor(rt, sa, dtype, 0.5, 2.0, 3);
        Tensor b = random_tensor(rt, sb, dtype, 0.5, 2.0, 4);
        Tensor out = rt.call1(name, {a, b});
        const Shape shape = broadcast_shapes(sa, sb, name);
        INFO(name << " " << to_string(sa) << " " << to_string(sb) << " " << dtype_name(dtype));
        CHECK(out.shape() == shape);
        CHECK(out.dtype() == dtype);
        require_close(rt, out, broadcast_reference(values(rt, a), sa, values(rt, b), sb, shape, fn), 1e-6, 1e-5);
      }
    }
  }
}

TEST_CASE("binary ops on 16-bit floats and integers", "[elementwise]") {
  Runtime rt;
  for (DType dtype : {DType::f16, DType::bf16}) {
    Tensor a = make_tensor(rt, {3}, {1.5, -2, 4}, dtype), b = make_tensor(rt, {1}, {0.5}, dtype);
    require_close(rt, rt.call1("div", {a, b}), {3, -4, 8});
    require_close(rt, rt.call1("sub", {b, a}), {-1, 2.5, -3.5});
  }
  for (DType dtype : {DType::i32, DType::i64}) {
    Tensor a = make_tensor(rt, {2, 2}, {1, -2, 3, 40}, dtype), b = make_tensor(rt, {2}, {3, 5}, dtype);
    require_close(rt, rt.call1("add", {a, b}), {4, 3, 6, 45});
    require_close(rt, rt.call1("sub", {a, b}), {-2, -7, 0, 35});
    require_close(rt, rt.call1("mul", {a, b}), {3, -10, 9, 200});
    CHECK(rt.call1("mul", {a, b}).dtype() == dtype);
  }
}

TEST_CASE("binary ops read non-contiguous operands", "[elementwise]") {
  Runtime rt;
  Tensor x = make_tensor(rt, {2, 3}, {0, 1, 2, 3, 4, 5}, DType::f32);
  Tensor t = rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 1}});  // [3, 2]: 0 3 / 1 4 / 2 5
  Tensor y = make_tensor(rt, {3, 2}, {10, 20, 30, 40, 50, 60}, DType::f32);
  require_close(rt, rt.call1("add", {t, y}), {10, 23, 31, 44, 52, 65});
  require_close(rt, rt.call1("mul", {y, t}), {0, 60, 30, 160, 100, 300});
}

TEST_CASE("scalar ops add and scale by an attribute", "[elementwise]") {
  Runtime rt;
  for (DType dtype : {DType::f32, DType::f64, DType::i64}) {
    Tensor a = make_tensor(rt, {4}, {1, 2, -3, 0}, dtype);
    require_close(rt, rt.call1("add_scalar", {a}, {{"value", 2.0}}), {3, 4, -1, 2});
    require_close(rt, rt.call1("mul_scalar", {a}, {{"value", -3.0}}), {-3, -6, 9, 0});
  }
  gradcheck(rt, "add_scalar", {random_tensor(rt, {2, 3})}, {{"value", 1.5}});
  gradcheck(rt, "mul_scalar", {random_tensor(rt, {2, 3})}, {{"value", -2.5}});
}

TEST_CASE("binary op gradients reduce to each operand's shape", "[elementwise]") {
  Runtime rt;
  for (const auto& [name, fn] : kBinary) {
    for (const auto& [sa, sb] : kShapePairs) {
      INFO(name << " " << to_string(sa) << " " << to_string(sb));
      gradcheck(rt, name, {random_tensor(rt, sa, DType::f64, 0.5, 2.0, 5), random_tensor(rt, sb, DType::f64, 0.5, 2.0, 6)});
    }
  }
}

TEST_CASE("binary ops reject mismatched shapes and dtypes", "[elementwise]") {
  Runtime rt;
  try {
    rt.call1("add", {rt.full({2, 3}, 1.0), rt.full({4}, 1.0)});
    FAIL("add accepted shapes that do not broadcast");
  } catch (const Error& e) {
    CHECK(e.status() == Status::shape_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("add") && Catch::Contains("[2, 3]") && Catch::Contains("[4]"));
  }
  try {
    rt.call1("mul", {rt.full({2}, 1.0, DType::f32), rt.full({2}, 1.0, DType::f64)});
    FAIL("mul accepted mixed dtypes");
  } catch (const Error& e) {
    CHECK(e.status() == Status::dtype_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("op 'mul'") && Catch::Contains("f64") && Catch::Contains("f32"));
  }
  try {
    rt.call1("div", {rt.full({2}, 1.0, DType::i32), rt.full({2}, 1.0, DType::i32)});
    FAIL("div accepted integers");
  } catch (const Error& e) {
    CHECK(e.status() == Status::unsupported);
    CHECK_THAT(e.what(), Catch::Contains("op 'div'") && Catch::Contains("i32"));
  }
}

TEST_CASE("add on one-element tensors has a small fixed cost", "[elementwise][perf]") {
#ifdef KILN_SANITIZED
  WARN("skipped: a sanitizer build's calls are not a measure of an op's fixed cost");
  return;
#endif
  Runtime rt;
  const OpDef& add = rt.op("add");
  const Attrs attrs = add.default_attrs();
  Tensor a = rt.full({1}, 1.0), b = rt.full({1}, 2.0);
  constexpr int kCalls = 20000;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i) a = rt.call1(add, {a, b}, attrs);
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / kCalls;
  require_close(rt, a, {1.0 + 2.0 * kCalls});
  INFO("add on two 1-element tensors: " << us << " us per call");
  CHECK(us < 5.0);  // generous: shared, loaded machines; typical figures are well under 1 us
}
