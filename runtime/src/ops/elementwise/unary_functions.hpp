// The unary functions, one struct each, written once for the CPU kernels
// (unary_ops.cpp) and the CUDA kernels (kernels/cuda/unary.cu): the name and
// attributes, the dtypes taken, how the gradient is formed, the oneDNN
// eltwise algorithm that computes it in f32 on the CPU (when oneDNN has one),
// and the value and derivative in the arithmetic type A (double for f64,
// float for f32, f16 and bf16, the integer type itself for integers).
//
// Where oneDNN has the function, the formulas follow its definition so that
// every dtype and device agrees, down to conventions at kinks (relu'(0) =
// slope, clamp passes the gradient on (min, max]); where oneDNN's derivative
// departs from PyTorch's (hardswish at ±3, abs at NaN), f32 backward runs the
// formula instead. Elsewhere the formulas follow PyTorch's, NaN rules
// included (NaN in, NaN out; sign(NaN) is NaN). A function that runs in f32
// under autocast says so with a `precision` member; the others promote. A
// new function is a struct here and an entry in UnaryFunctions.
#pragma once

#include <oneapi/dnnl/dnnl_types.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>
#include <vector>

#include "kiln/ops/helpers.hpp"
#include "kiln/util/host_device.hpp"

namespace kiln::elementwise {

// A function's attributes as its formulas read them, computed once on the
// host: alpha and beta mean what the oneDNN algorithm takes (a slope, an
// exponent, bounds); variant picks one of two forms.
struct UnaryParams {
  double alpha = 0.0;
  double beta = 0.0;
  bool variant = false;
};

// The dtypes a function takes.
enum class Domain {
  floating,  // f32, f64, f16, bf16
  numeric,   // those and i32, i64, u8
  all,       // those and bool
};

// How a function's gradient is formed.
enum class Gradient {
  derivative,  // by its own op f_backward(grad, input) = grad * f'(input)
  zero,        // zeros: the function is piecewise constant (floor, sign, ...)
  itself,      // f(grad): the function is linear (neg)
};

// The defaults: floating point, no attributes, no oneDNN algorithm.
struct UnaryFunction {
  static constexpr Domain domain = Domain::floating;
  static constexpr Gradient gradient = Gradient::derivative;
  // Whether f32 backward runs on oneDNN too (when it has the algorithm);
  // false where oneDNN's derivative disagrees with PyTorch's somewhere.
  static constexpr bool onednn_backward = true;
  // Whether oneDNN's forward turns NaN into a number (its exp gives inf),
  // so that the kernel puts the NaN back, as PyTorch keeps it.
  static constexpr bool onednn_loses_nan = false;
  static std::vector<AttrSpec> attrs() { return {}; }
  static UnaryParams params(const OpDef&, const Attrs&) { return {}; }
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_alg_kind_undef; }
};

template <class A> KILN_HOST_DEVICE inline A logistic(A x) { return A(1) / (A(1) + std::exp(-x)); }

// log(1 + exp(x)) as PyTorch computes it (softplus, mish).
template <class A> KILN_HOST_DEVICE inline A log1p_exp(A x) { return std::log1p(std::exp(x)); }

// ---- activations and powers -------------------------------------------------------

struct Neg : UnaryFunction {
  static constexpr const char* name = "neg";
  static constexpr Gradient gradient = Gradient::itself;
  static UnaryParams params(const OpDef&, const Attrs&) { return {-1.0, 0.0}; }  // oneDNN's linear: alpha*x + beta
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_eltwise_linear; }
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return -x; }
  template <class A> KILN_HOST_DEVICE static A derivative(A, const UnaryParams&) { return A(-1); }
};

// relu and leaky_relu: x for x > 0, alpha * x otherwise.
struct Relu : UnaryFunction {
  static constexpr const char* name = "relu";
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_eltwise_relu; }
  // relu (alpha 0) gives 0 for -inf, where alpha * x would be NaN; NaN stays NaN.
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams& p) {
    if (x > A(0)) return x;
    return A(p.alpha) == A(0) && x <= A(0) ? A(0) : A(p.alpha) * x;
  }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams& p) {
    return x > A(0) ? A(1) : A(p.alpha);
  }
};

struct LeakyRelu : Relu {
  static constexpr const char* name = "leaky_relu";
  static std::vector<AttrSpec> attrs() { return {attr_real("negative_slope", 0.01)}; }
  static UnaryParams params(const OpDef& op, const Attrs& a) { return {op.attr_real(a, "negative_slope"), 0.0}; }
};

// variant: the tanh approximation.
struct Gelu : UnaryFunction {
  static constexpr const char* name = "gelu";
  static std::vector<AttrSpec> attrs() { return {attr_string("approximate", "none")}; }
  static UnaryParams params(const OpDef& op, const Attrs& a) {
    const std::string& approximate = op.attr_string(a, "approximate");
    KILN_CHECK(approximate == "none" || approximate == "tanh", Status::invalid_argument, "op '", op.name,
               "': approximate must be \"none\" (erf) or \"tanh\", got \"", approximate, "\"");
    return {0.0, 0.0, approximate == "tanh"};
  }
  static dnnl_alg_kind_t onednn(const UnaryParams& p) {
    return p.variant ? dnnl_eltwise_gelu_tanh : dnnl_eltwise_gelu_erf;
  }
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams& p) {
    if (p.variant) return A(0.5) * x * (A(1) + std::tanh(tanh_arg(x)));
    return A(0.5) * x * (A(1) + std::erf(x * A(std::numbers::sqrt2 / 2)));
  }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams& p) {
    if (p.variant) {
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
  template <class A> KILN_HOST_DEVICE static A tanh_arg(A x) { return A(kSqrt2OverPi) * (x + A(kCubic) * x * x * x); }
};

// silu is oneDNN's swish with alpha 1: x * sigmoid(x).
struct Silu : UnaryFunction {
  static constexpr const char* name = "silu";
  static UnaryParams params(const OpDef&, const Attrs&) { return {1.0, 0.0}; }
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_eltwise_swish; }
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return x * logistic(x); }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) {
    const A s = logistic(x);
    return s * (A(1) + x * (A(1) - s));
  }
};

// softplus(x) = log(1 + exp(beta * x)) / beta, and x itself where beta * x
// exceeds threshold (torch.nn.functional.softplus). alpha: beta, beta:
// threshold. No oneDNN: its soft_relu (2.6) loses the negative tail
// (softplus(-20) comes out -1.9e-6, softplus(-15) 0).
struct Softplus : UnaryFunction {
  static constexpr const char* name = "softplus";
  static std::vector<AttrSpec> attrs() { return {attr_real("beta", 1.0), attr_real("threshold", 20.0)}; }
  static UnaryParams params(const OpDef& op, const Attrs& a) {
    return {op.attr_real(a, "beta"), op.attr_real(a, "threshold")};
  }
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams& p) {
    const A scaled = x * A(p.alpha);
    return scaled > A(p.beta) ? x : log1p_exp(scaled) / A(p.alpha);
  }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams& p) {
    const A scaled = x * A(p.alpha);
    return scaled > A(p.beta) ? A(1) : logistic(scaled);
  }
};

// x * relu6(x + 3) / 6, NaN for NaN and -inf as in PyTorch. oneDNN 2
// ignores alpha and beta; later versions read them as the slope 1/6 and the
// shift 1/2. Its derivative is 0 at -3 and 1 at 3, where PyTorch's middle
// piece x / 3 + 1/2 holds on [-3, 3]: f32 backward runs the formula.
struct Hardswish : UnaryFunction {
  static constexpr const char* name = "hardswish";
  static constexpr bool onednn_backward = false;
  static UnaryParams params(const OpDef&, const Attrs&) { return {1.0 / 6.0, 0.5}; }
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_eltwise_hardswish; }
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) {
    const A shifted = x + A(3);
    return x * (shifted < A(0) ? A(0) : shifted > A(6) ? A(6) : shifted) / A(6);
  }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) {
    return x < A(-3) ? A(0) : x <= A(3) ? x / A(3) + A(0.5) : A(1);
  }
};

// x * tanh(softplus(x)).
struct Mish : UnaryFunction {
  static constexpr const char* name = "mish";
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_eltwise_mish; }
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return x * std::tanh(log1p_exp(x)); }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) {
    const A t = std::tanh(log1p_exp(x));
    return t + x * logistic(x) * (A(1) - t * t);
  }
};

struct Tanh : UnaryFunction {
  static constexpr const char* name = "tanh";
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_eltwise_tanh; }
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return std::tanh(x); }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) {
    const A t = std::tanh(x);
    return A(1) - t * t;
  }
};

struct Sigmoid : UnaryFunction {
  static constexpr const char* name = "sigmoid";
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_eltwise_logistic; }
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return logistic(x); }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) {
    const A s = logistic(x);
    return s * (A(1) - s);
  }
};

struct Exp : UnaryFunction {
  static constexpr const char* name = "exp";
  static constexpr PrecisionCategory precision = PrecisionCategory::f32;
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_eltwise_exp; }
  static constexpr bool onednn_loses_nan = true;
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return std::exp(x); }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) { return std::exp(x); }
};

struct Log : UnaryFunction {
  static constexpr const char* name = "log";
  static constexpr PrecisionCategory precision = PrecisionCategory::f32;
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_eltwise_log; }
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return std::log(x); }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) { return A(1) / x; }
};

struct Sqrt : UnaryFunction {
  static constexpr const char* name = "sqrt";
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_eltwise_sqrt; }
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return std::sqrt(x); }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) { return A(0.5) / std::sqrt(x); }
};

// oneDNN's pow is alpha * x^beta; kiln's has alpha 1.
struct Pow : UnaryFunction {
  static constexpr const char* name = "pow";
  static constexpr PrecisionCategory precision = PrecisionCategory::f32;
  static std::vector<AttrSpec> attrs() { return {attr_required("exponent", AttrType::real)}; }
  static UnaryParams params(const OpDef& op, const Attrs& a) { return {1.0, op.attr_real(a, "exponent")}; }
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_eltwise_pow; }
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams& p) { return std::pow(x, A(p.beta)); }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams& p) {
    return A(p.beta) * std::pow(x, A(p.beta) - A(1));
  }
};

// A NaN bound means no bound on that side, which oneDNN's clip takes as an
// infinite one.
struct Clamp : UnaryFunction {
  static constexpr const char* name = "clamp";
  static std::vector<AttrSpec> attrs() {
    constexpr double none = std::numeric_limits<double>::quiet_NaN();
    return {attr_real("min", none), attr_real("max", none)};
  }
  static UnaryParams params(const OpDef& op, const Attrs& a) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    const double lo = op.attr_real(a, "min"), hi = op.attr_real(a, "max");
    return {std::isnan(lo) ? -inf : lo, std::isnan(hi) ? inf : hi};
  }
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_eltwise_clip; }
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams& p) {
    return x > A(p.beta) ? A(p.beta) : x < A(p.alpha) ? A(p.alpha) : x;
  }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams& p) {
    return A(p.alpha) < x && x <= A(p.beta) ? A(1) : A(0);
  }
};

// ---- rounding, signs and elementary functions ------------------------------------

// -1, 0 or 1 for a floating x, and x itself when it is NaN.
template <class A> KILN_HOST_DEVICE inline A signum(A x) {
  return x > A(0) ? A(1) : x < A(0) ? A(-1) : x == A(0) ? A(0) : x;
}

// |x|; integers too (the most negative value stays itself, as in PyTorch),
// and -0 gives +0. The derivative is sign(x), NaN for NaN, where oneDNN's
// is 1: f32 backward runs the formula.
struct Abs : UnaryFunction {
  static constexpr const char* name = "abs";
  static constexpr Domain domain = Domain::numeric;
  static constexpr bool onednn_backward = false;
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_eltwise_abs; }
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) {
    if constexpr (std::is_unsigned_v<A>) {
      return x;
    } else if constexpr (std::is_integral_v<A>) {
      using U = std::make_unsigned_t<A>;
      return x < A(0) ? A(U(0) - U(x)) : x;  // wraps instead of overflowing
    } else {
      return std::abs(x);
    }
  }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) { return signum(x); }
};

// -1, 0 or 1; NaN gives 0 (PyTorch's rule; NumPy keeps NaN); bool and
// unsigned integers give 0 or 1.
struct Sign : UnaryFunction {
  static constexpr const char* name = "sign";
  static constexpr Domain domain = Domain::all;
  static constexpr Gradient gradient = Gradient::zero;
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) {
    if constexpr (std::is_unsigned_v<A>) return A(x != A(0));  // bool included
    else return A(int(x > A(0)) - int(x < A(0)));              // NaN gives 0, as in PyTorch
  }
};

struct Floor : UnaryFunction {
  static constexpr const char* name = "floor";
  static constexpr Gradient gradient = Gradient::zero;
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return std::floor(x); }
};

struct Ceil : UnaryFunction {
  static constexpr const char* name = "ceil";
  static constexpr Gradient gradient = Gradient::zero;
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return std::ceil(x); }
};

// Half-way cases go to the even neighbour (torch.round, oneDNN's round):
// nearbyint in the default rounding mode.
struct Round : UnaryFunction {
  static constexpr const char* name = "round";
  static constexpr Gradient gradient = Gradient::zero;
  static dnnl_alg_kind_t onednn(const UnaryParams&) { return dnnl_eltwise_round; }
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return std::nearbyint(x); }
};

struct Trunc : UnaryFunction {
  static constexpr const char* name = "trunc";
  static constexpr Gradient gradient = Gradient::zero;
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return std::trunc(x); }
};

struct Sin : UnaryFunction {
  static constexpr const char* name = "sin";
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return std::sin(x); }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) { return std::cos(x); }
};

struct Cos : UnaryFunction {
  static constexpr const char* name = "cos";
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return std::cos(x); }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) { return -std::sin(x); }
};

struct Rsqrt : UnaryFunction {
  static constexpr const char* name = "rsqrt";
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return A(1) / std::sqrt(x); }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) {
    return A(-0.5) / (x * std::sqrt(x));
  }
};

struct Erf : UnaryFunction {
  static constexpr const char* name = "erf";
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return std::erf(x); }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) {
    return A(std::numbers::inv_sqrtpi * 2) * std::exp(-x * x);
  }
};

struct Log1p : UnaryFunction {
  static constexpr const char* name = "log1p";
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return std::log1p(x); }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) { return A(1) / (A(1) + x); }
};

struct Expm1 : UnaryFunction {
  static constexpr const char* name = "expm1";
  template <class A> KILN_HOST_DEVICE static A value(A x, const UnaryParams&) { return std::expm1(x); }
  template <class A> KILN_HOST_DEVICE static A derivative(A x, const UnaryParams&) { return std::exp(x); }
};

template <class... Fn> struct FunctionList {};

// Every unary function; unary_ops.cpp registers an op (and a backward op)
// for each, unary.cu adds their CUDA kernels.
using UnaryFunctions = FunctionList<Neg, Relu, LeakyRelu, Gelu, Silu, Softplus, Hardswish, Mish, Tanh, Sigmoid, Exp,
                                    Log, Sqrt, Pow, Clamp, Abs, Sign, Floor, Ceil, Round, Trunc, Sin, Cos, Rsqrt, Erf,
                                    Log1p, Expm1>;

}  // namespace kiln::elementwise
