#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"
#include "unary_references.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

struct UnaryCase {
  const char* name;
  std::vector<std::pair<std::string_view, AttrValue>> attrs;
  std::function<double(double)> reference;
  double lo = -2, hi = 2;  // input range: positive where the function needs it
};

const double kNone = std::numeric_limits<double>::quiet_NaN();

const std::vector<UnaryCase> kCases = {
    {"neg", {}, [](double x) { return -x; }},
    {"relu", {}, [](double x) { return x > 0 ? x : 0.0; }},
    {"leaky_relu", {}, [](double x) { return x > 0 ? x : 0.01 * x; }},
    {"leaky_relu", {{"negative_slope", 0.2}}, [](double x) { return x > 0 ? x : 0.2 * x; }},
    {"gelu", {}, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
    {"gelu",
     {{"approximate", std::string("tanh")}},
     [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }},
    {"silu", {}, [](double x) { return x * sigmoid(x); }},
    {"tanh", {}, [](double x) { return std::tanh(x); }},
    {"sigmoid", {}, sigmoid},
    {"exp", {}, [](double x) { return std::exp(x); }},
    {"log", {}, [](double x) { return std::log(x); }, 0.2, 3},
    {"sqrt", {}, [](double x) { return std::sqrt(x); }, 0.2, 3},
    {"pow", {{"exponent", 2.5}}, [](double x) { return std::pow(x, 2.5); }, 0.2, 3},
    {"pow", {{"exponent", 3.0}}, [](double x) { return x * x * x; }},
    {"clamp", {{"min", -0.5}, {"max", 0.7}}, [](double x) { return std::min(std::max(x, -0.5), 0.7); }},
    {"clamp", {{"min", -0.5}}, [](double x) { return std::max(x, -0.5); }},
    {"clamp", {{"max", 0.3}, {"min", kNone}}, [](double x) { return std::min(x, 0.3); }},
    {"softplus", {}, softplus_reference(1, 20)},
    {"softplus", {{"beta", 2.0}, {"threshold", 3.0}}, softplus_reference(2, 3)},
    {"hardswish", {}, hardswish_reference, -4, 4},
    {"mish", {}, mish_reference},
    {"abs", {}, [](double x) { return std::abs(x); }},
    {"sign", {}, sign_reference},
    {"floor", {}, [](double x) { return std::floor(x); }, -3, 3},
    {"ceil", {}, [](double x) { return std::ceil(x); }, -3, 3},
    {"round", {}, [](double x) { return std::nearbyint(x); }, -3, 3},
    {"trunc", {}, [](double x) { return std::trunc(x); }, -3, 3},
    {"sin", {}, [](double x) { return std::sin(x); }, -4, 4},
    {"cos", {}, [](double x) { return std::cos(x); }, -4, 4},
    {"rsqrt", {}, [](double x) { return 1 / std::sqrt(x); }, 0.2, 3},
    {"erf", {}, [](double x) { return std::erf(x); }},
    {"log1p", {}, [](double x) { return std::log1p(x); }, -0.8, 3},
    {"expm1", {}, [](double x) { return std::expm1(x); }},
};

std::vector<double> map_values(const std::vector<double>& x, const std::function<double(double)>& f) {
  std::vector<double> r;
  for (double v : x) r.push_back(f(v));
  return r;
}

// Calls op `name` with the case's attributes.
Tensor call(Runtime& rt, const std::string& name, const UnaryCase& u, std::initializer_list<Tensor> inputs) {
  const OpDef& op = rt.op(name);
  return rt.call1(op, inputs, op.make_attrs(u.attrs));
}

}  // namespace

TEST_CASE("unary ops match a reference in f32 (oneDNN) and f64", "[elementwise]") {
  Runtime rt;
  for (const UnaryCase& u : kCases) {
    for (DType dtype : {DType::f32, DType::f64}) {
      INFO(u.name << " " << dtype_name(dtype));
      Tensor x = random_tensor(rt, {3, 37}, dtype, u.lo, u.hi, 11);
      Tensor y = call(rt, u.name, u, {x});
      CHECK(y.dtype() == dtype);
      CHECK(y.shape() == x.shape());
      // oneDNN f32 log loses absolute accuracy near 1, hence atol 1e-5 there.
      const bool f32 = dtype == DType::f32;
      require_close(rt, y, map_values(values(rt, x), u.reference), f32 ? 1e-5 : 1e-12, f32 ? 1e-5 : 1e-12);
    }
  }
}

TEST_CASE("unary ops compute 16-bit floats through float", "[elementwise]") {
  Runtime rt;
  for (DType dtype : {DType::f16, DType::bf16}) {
    Tensor x = make_tensor(rt, {4}, {-1, 0.5, 1, 2}, dtype);
    require_close(rt, rt.call1("relu", {x}), {0, 0.5, 1, 2});
    require_close(rt, rt.call1("exp", {x}), map_values({-1, 0.5, 1, 2}, [](double v) { return std::exp(v); }), 1e-2, 1e-2);
  }
}

TEST_CASE("unary ops accept a transposed input", "[elementwise]") {
  Runtime rt;
  Tensor x = make_tensor(rt, {2, 3}, {-3, -2, -1, 1, 2, 3}, DType::f32);
  Tensor t = rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 1}});
  require_close(rt, rt.call1("relu", {t}), {0, 1, 0, 2, 0, 3});
  require_close(rt, rt.call1("neg", {t}), {3, -1, 2, -2, 1, -3});
}

TEST_CASE("unary op gradients match finite differences", "[elementwise]") {
  Runtime rt;
  for (const UnaryCase& u : kCases) {
    INFO(u.name);
    const OpDef& op = rt.op(u.name);
    gradcheck(rt, op, {random_tensor(rt, {2, 5}, DType::f64, u.lo, u.hi, 12)}, op.make_attrs(u.attrs));
  }
}

TEST_CASE("unary backward ops in f32 agree with f64", "[elementwise]") {
  Runtime rt;
  for (const UnaryCase& u : kCases) {
    // neg's backward is neg; piecewise constant functions have none.
    const std::string backward = std::string(u.name) + "_backward";
    if (rt.registry().find(backward) == nullptr) continue;
    INFO(backward);
    Tensor x64 = random_tensor(rt, {41}, DType::f64, u.lo, u.hi, 13);
    Tensor g64 = random_tensor(rt, {41}, DType::f64, -1, 1, 14);
    const std::vector<double> expected = values(rt, call(rt, backward, u, {g64, x64}));
    Tensor x32 = rt.call1("cast", {x64}, {{"dtype", DType::f32}});
    Tensor g32 = rt.call1("cast", {g64}, {{"dtype", DType::f32}});
    require_close(rt, call(rt, backward, u, {g32, x32}), expected, 1e-5, 1e-4);
  }
}

TEST_CASE("unary ops reject integers and bad attributes", "[elementwise]") {
  Runtime rt;
  try {
    rt.call1("relu", {rt.full({2}, 1.0, DType::i32)});
    FAIL("relu accepted an integer tensor");
  } catch (const Error& e) {
    CHECK(e.status() == Status::dtype_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("op 'relu'") && Catch::Contains("i32"));
  }
  try {
    rt.call1("gelu", {rt.full({2}, 1.0)}, {{"approximate", std::string("fast")}});
    FAIL("gelu accepted an unknown approximation");
  } catch (const Error& e) {
    CHECK(e.status() == Status::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("op 'gelu'") && Catch::Contains("fast"));
  }
  try {
    rt.call1("pow", {rt.full({2}, 1.0)});
    FAIL("pow ran without an exponent");
  } catch (const Error& e) {
    CHECK(e.status() == Status::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("exponent"));
  }
}
