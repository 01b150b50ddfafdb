// The unary functions, one struct each: its name and attributes, how its
// attributes become oneDNN eltwise parameters, and the value and derivative
// the plain C++ kernels compute (in double for f64, float otherwise). The
// C++ formulas follow oneDNN's definitions so every dtype agrees, down to
// conventions at kinks (relu'(0) = slope, clamp passes the gradient on
// (min, max]). A function that runs in f32 under autocast says so with a
// `precision` member; the others promote.
#pragma once

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "dnnl_eltwise.hpp"
#include "kiln/ops/helpers.hpp"

namespace kiln::elementwise {

using alg = dnnl::algorithm;

template <class A> inline A logistic(A x) { return A(1) / (A(1) + std::exp(-x)); }

struct Neg {
  static constexpr const char* name = "neg";
  static std::vector<AttrSpec> attrs() { return {}; }
  static EltwiseParams params(const OpDef&, const Attrs&) { return {alg::eltwise_linear, -1.0, 0.0}; }
  template <class A> static A value(A x, const EltwiseParams&) { return -x; }
  template <class A> static A derivative(A, const EltwiseParams&) { return A(-1); }
};

// relu and leaky_relu: x for x > 0, alpha * x otherwise.
struct Relu {
  static constexpr const char* name = "relu";
  static std::vector<AttrSpec> attrs() { return {}; }
  static EltwiseParams params(const OpDef&, const Attrs&) { return {alg::eltwise_relu, 0.0, 0.0}; }
  template <class A> static A value(A x, const EltwiseParams& p) { return x > A(0) ? x : A(p.alpha) * x; }
  template <class A> static A derivative(A x, const EltwiseParams& p) { return x > A(0) ? A(1) : A(p.alpha); }
};

struct LeakyRelu : Relu {
  static constexpr const char* name = "leaky_relu";
  static std::vector<AttrSpec> attrs() { return {attr_real("negative_slope", 0.01)}; }
  static EltwiseParams params(const OpDef& op, const Attrs& a) {
    return {alg::eltwise_relu, op.attr_real(a, "negative_slope"), 0.0};
  }
};

struct Gelu {
  static constexpr const char* name = "gelu";
  static std::vector<AttrSpec> attrs() { return {attr_string("approximate", "none")}; }
  static EltwiseParams params(const OpDef& op, const Attrs& a) {
    const std::string& approximate = op.attr_string(a, "approximate");
    KILN_CHECK(approximate == "none" || approximate == "tanh", Status::invalid_argument, "op '", op.name,
               "': approximate must be \"none\" (erf) or \"tanh\", got \"", approximate, "\"");
    return {approximate == "tanh" ? alg::eltwise_gelu_tanh : alg::eltwise_gelu_erf, 0.0, 0.0};
  }
  template <class A> static A value(A x, const EltwiseParams& p) {
    if (p.algorithm == alg::eltwise_gelu_tanh) return A(0.5) * x * (A(1) + std::tanh(tanh_arg(x)));
    return A(0.5) * x * (A(1) + std::erf(x * A(std::numbers::sqrt2 / 2)));
  }
  template <class A> static A derivative(A x, const EltwiseParams& p) {
    if (p.algorithm == alg::eltwise_gelu_tanh) {
      const A t = std::tanh(tanh_arg(x));
      const A dt = A(kSqrt2OverPi) * (A(1) + A(3 * kCubic) * x * x);
      return A(0.5) * (A(1) + t) + A(0.5) * x * (A(1) - t * t) * dt;
    }
    const A pdf = std::exp(A(-0.5) * x * x) * A(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
    return A(0.5) * (A(1) + std::erf(x * A(std::numbers::sqrt2 / 2))) + x * pdf;
  }

 private:
  static constexpr double kSqrt2OverPi = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;
  static constexpr double kCubic = 0.044715;
  template <class A> static A tanh_arg(A x) { return A(kSqrt2OverPi) * (x + A(kCubic) * x * x * x); }
};

// silu is oneDNN's swish with alpha 1: x * sigmoid(x).
struct Silu {
  static constexpr const char* name = "silu";
  static std::vector<AttrSpec> attrs() { return {}; }
  static EltwiseParams params(const OpDef&, const Attrs&) { return {alg::eltwise_swish, 1.0, 0.0}; }
  template <class A> static A value(A x, const EltwiseParams&) { return x * logistic(x); }
  template <class A> static A derivative(A x, const EltwiseParams&) {
    const A s = logistic(x);
    return s * (A(1) + x * (A(1) - s));
  }
};

struct Tanh {
  static constexpr const char* name = "tanh";
  static std::vector<AttrSpec> attrs() { return {}; }
  static EltwiseParams params(const OpDef&, const Attrs&) { return {alg::eltwise_tanh, 0.0, 0.0}; }
  template <class A> static A value(A x, const EltwiseParams&) { return std::tanh(x); }
  template <class A> static A derivative(A x, const EltwiseParams&) {
    const A t = std::tanh(x);
    return A(1) - t * t;
  }
};

struct Sigmoid {
  static constexpr const char* name = "sigmoid";
  static std::vector<AttrSpec> attrs() { return {}; }
  static EltwiseParams params(const OpDef&, const Attrs&) { return {alg::eltwise_logistic, 0.0, 0.0}; }
  template <class A> static A value(A x, const EltwiseParams&) { return logistic(x); }
  template <class A> static A derivative(A x, const EltwiseParams&) {
    const A s = logistic(x);
    return s * (A(1) - s);
  }
};

struct Exp {
  static constexpr const char* name = "exp";
  static constexpr PrecisionCategory precision = PrecisionCategory::f32;
  static std::vector<AttrSpec> attrs() { return {}; }
  static EltwiseParams params(const OpDef&, const Attrs&) { return {alg::eltwise_exp, 0.0, 0.0}; }
  template <class A> static A value(A x, const EltwiseParams&) { return std::exp(x); }
  template <class A> static A derivative(A x, const EltwiseParams&) { return std::exp(x); }
};

struct Log {
  static constexpr const char* name = "log";
  static constexpr PrecisionCategory precision = PrecisionCategory::f32;
  static std::vector<AttrSpec> attrs() { return {}; }
  static EltwiseParams params(const OpDef&, const Attrs&) { return {alg::eltwise_log, 0.0, 0.0}; }
  template <class A> static A value(A x, const EltwiseParams&) { return std::log(x); }
  template <class A> static A derivative(A x, const EltwiseParams&) { return A(1) / x; }
};

struct Sqrt {
  static constexpr const char* name = "sqrt";
  static std::vector<AttrSpec> attrs() { return {}; }
  static EltwiseParams params(const OpDef&, const Attrs&) { return {alg::eltwise_sqrt, 0.0, 0.0}; }
  template <class A> static A value(A x, const EltwiseParams&) { return std::sqrt(x); }
  template <class A> static A derivative(A x, const EltwiseParams&) { return A(0.5) / std::sqrt(x); }
};

// oneDNN's pow is alpha * x^beta; kiln's has alpha 1.
struct Pow {
  static constexpr const char* name = "pow";
  static constexpr PrecisionCategory precision = PrecisionCategory::f32;
  static std::vector<AttrSpec> attrs() { return {attr_required("exponent", AttrType::real)}; }
  static EltwiseParams params(const OpDef& op, const Attrs& a) {
    return {alg::eltwise_pow, 1.0, op.attr_real(a, "exponent")};
  }
  template <class A> static A value(A x, const EltwiseParams& p) { return std::pow(x, A(p.beta)); }
  template <class A> static A derivative(A x, const EltwiseParams& p) {
    return A(p.beta) * std::pow(x, A(p.beta) - A(1));
  }
};

// A NaN bound means no bound on that side, which oneDNN's clip takes as an
// infinite one.
struct Clamp {
  static constexpr const char* name = "clamp";
  static std::vector<AttrSpec> attrs() {
    constexpr double none = std::numeric_limits<double>::quiet_NaN();
    return {attr_real("min", none), attr_real("max", none)};
  }
  static EltwiseParams params(const OpDef& op, const Attrs& a) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    const double lo = op.attr_real(a, "min"), hi = op.attr_real(a, "max");
    return {alg::eltwise_clip, std::isnan(lo) ? -inf : lo, std::isnan(hi) ? inf : hi};
  }
  template <class A> static A value(A x, const EltwiseParams& p) {
    return x > A(p.beta) ? A(p.beta) : x < A(p.alpha) ? A(p.alpha) : x;
  }
  template <class A> static A derivative(A x, const EltwiseParams& p) {
    return A(p.alpha) < x && x <= A(p.beta) ? A(1) : A(0);
  }
};

}  // namespace kiln::elementwise
