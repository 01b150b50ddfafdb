// The unary ops and their backward ops on a GPU: f(input) and
// f_backward(grad, input) = grad * f'(input), in f32, f64, f16 and bf16
// (computed in float, or double for f64). The formulas follow the CPU's
// (oneDNN's definitions), down to the conventions at kinks: relu'(0) is the
// slope, clamp passes the gradient on (min, max].
#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "cuda_kernels.hpp"
#include "element.cuh"
#include "map.cuh"

namespace kiln {
namespace {

using cuda::from_math;
using cuda::to_math;

// A function's attributes, read on the host: a slope, an exponent, bounds,
// or which of two variants.
struct UnaryParams {
  double alpha = 0.0;
  double beta = 0.0;
  bool variant = false;
};

UnaryParams no_params(const OpDef&, const Attrs&) { return {}; }

template <class A> __device__ inline A logistic(A x) { return A(1) / (A(1) + exp(-x)); }

struct Neg {
  static constexpr const char* name = "neg";
  static constexpr auto params = no_params;
  template <class A> __device__ static A value(A x, const UnaryParams&) { return -x; }
  template <class A> __device__ static A derivative(A, const UnaryParams&) { return A(-1); }
};

struct Relu {
  static constexpr const char* name = "relu";
  static constexpr auto params = no_params;
  template <class A> __device__ static A value(A x, const UnaryParams& p) { return x > A(0) ? x : A(p.alpha) * x; }
  template <class A> __device__ static A derivative(A x, const UnaryParams& p) { return x > A(0) ? A(1) : A(p.alpha); }
};

struct LeakyRelu : Relu {
  static constexpr const char* name = "leaky_relu";
  static UnaryParams params(const OpDef& op, const Attrs& a) { return {op.attr_real(a, "negative_slope"), 0.0}; }
};

// variant: the tanh approximation (the infer function has checked the name).
struct Gelu {
  static constexpr const char* name = "gelu";
  static UnaryParams params(const OpDef& op, const Attrs& a) {
    return {0.0, 0.0, op.attr_string(a, "approximate") == "tanh"};
  }
  template <class A> __device__ static A value(A x, const UnaryParams& p) {
    if (p.variant) return A(0.5) * x * (A(1) + tanh(tanh_arg(x)));
    return A(0.5) * x * (A(1) + erf(x * A(std::numbers::sqrt2 / 2)));
  }
  template <class A> __device__ static A derivative(A x, const UnaryParams& p) {
    if (p.variant) {
      const A t = tanh(tanh_arg(x));
      const A dt = A(kSqrt2OverPi) * (A(1) + A(3 * kCubic) * x * x);
      return A(0.5) * (A(1) + t) + A(0.5) * x * (A(1) - t * t) * dt;
    }
    const A pdf = exp(A(-0.5) * x * x) * A(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
    return A(0.5) * (A(1) + erf(x * A(std::numbers::sqrt2 / 2))) + x * pdf;
  }

 private:
  static constexpr double kSqrt2OverPi = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;
  static constexpr double kCubic = 0.044715;
  template <class A> __device__ static A tanh_arg(A x) { return A(kSqrt2OverPi) * (x + A(kCubic) * x * x * x); }
};

struct Silu {
  static constexpr const char* name = "silu";
  static constexpr auto params = no_params;
  template <class A> __device__ static A value(A x, const UnaryParams&) { return x * logistic(x); }
  template <class A> __device__ static A derivative(A x, const UnaryParams&) {
    const A s = logistic(x);
    return s * (A(1) + x * (A(1) - s));
  }
};

struct Tanh {
  static constexpr const char* name = "tanh";
  static constexpr auto params = no_params;
  template <class A> __device__ static A value(A x, const UnaryParams&) { return tanh(x); }
  template <class A> __device__ static A derivative(A x, const UnaryParams&) {
    const A t = tanh(x);
    return A(1) - t * t;
  }
};

struct Sigmoid {
  static constexpr const char* name = "sigmoid";
  static constexpr auto params = no_params;
  template <class A> __device__ static A value(A x, const UnaryParams&) { return logistic(x); }
  template <class A> __device__ static A derivative(A x, const UnaryParams&) {
    const A s = logistic(x);
    return s * (A(1) - s);
  }
};

struct Exp {
  static constexpr const char* name = "exp";
  static constexpr auto params = no_params;
  template <class A> __device__ static A value(A x, const UnaryParams&) { return exp(x); }
  template <class A> __device__ static A derivative(A x, const UnaryParams&) { return exp(x); }
};

struct Log {
  static constexpr const char* name = "log";
  static constexpr auto params = no_params;
  template <class A> __device__ static A value(A x, const UnaryParams&) { return log(x); }
  template <class A> __device__ static A derivative(A x, const UnaryParams&) { return A(1) / x; }
};

struct Sqrt {
  static constexpr const char* name = "sqrt";
  static constexpr auto params = no_params;
  template <class A> __device__ static A value(A x, const UnaryParams&) { return sqrt(x); }
  template <class A> __device__ static A derivative(A x, const UnaryParams&) { return A(0.5) / sqrt(x); }
};

// beta: the exponent.
struct Pow {
  static constexpr const char* name = "pow";
  static UnaryParams params(const OpDef& op, const Attrs& a) { return {1.0, op.attr_real(a, "exponent")}; }
  template <class A> __device__ static A value(A x, const UnaryParams& p) { return pow(x, A(p.beta)); }
  template <class A> __device__ static A derivative(A x, const UnaryParams& p) {
    return A(p.beta) * pow(x, A(p.beta) - A(1));
  }
};

// alpha, beta: the bounds; a NaN bound means none on that side.
struct Clamp {
  static constexpr const char* name = "clamp";
  static UnaryParams params(const OpDef& op, const Attrs& a) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    const double lo = op.attr_real(a, "min"), hi = op.attr_real(a, "max");
    return {std::isnan(lo) ? -inf : lo, std::isnan(hi) ? inf : hi};
  }
  template <class A> __device__ static A value(A x, const UnaryParams& p) {
    return x > A(p.beta) ? A(p.beta) : x < A(p.alpha) ? A(p.alpha) : x;
  }
  template <class A> __device__ static A derivative(A x, const UnaryParams& p) {
    return A(p.alpha) < x && x <= A(p.beta) ? A(1) : A(0);
  }
};

template <class Fn, class T>
struct Forward {
  UnaryParams p;
  __device__ T operator()(T x) const { return from_math<T>(Fn::value(to_math(x), p)); }
};

template <class Fn, class T>
struct Backward {
  UnaryParams p;
  __device__ T operator()(T grad, T x) const { return from_math<T>(to_math(grad) * Fn::derivative(to_math(x), p)); }
};

template <class Fn>
struct UnaryKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    cuda::Map<T, T>::run_dense(Fn::name, c.outputs[0], Forward<Fn, T>{Fn::params(c.op, c.attrs)}, c.inputs[0]);
  }
};

template <class Fn>
struct UnaryBackwardKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    cuda::Map<T, T, T>::run_dense(Fn::name, c.outputs[0], Backward<Fn, T>{Fn::params(c.op, c.attrs)}, c.inputs[0],
                                  c.inputs[1]);
  }
};

template <class Fn>
void register_unary(OpRegistry& r, bool with_backward) {
  cuda::set_kernels<UnaryKernels<Fn>>(r, Fn::name, cuda::FloatTypes{});
  if (with_backward)
    cuda::set_kernels<UnaryBackwardKernels<Fn>>(r, std::string(Fn::name) + "_backward", cuda::FloatTypes{});
}

}  // namespace

void register_cuda_unary_kernels(OpRegistry& r) {
  register_unary<Neg>(r, false);  // neg's backward is neg
  register_unary<Relu>(r, true);
  register_unary<LeakyRelu>(r, true);
  register_unary<Gelu>(r, true);
  register_unary<Silu>(r, true);
  register_unary<Tanh>(r, true);
  register_unary<Sigmoid>(r, true);
  register_unary<Exp>(r, true);
  register_unary<Log>(r, true);
  register_unary<Sqrt>(r, true);
  register_unary<Pow>(r, true);
  register_unary<Clamp>(r, true);
}

}  // namespace kiln
