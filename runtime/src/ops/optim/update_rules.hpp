// The per-element formulas of the fused optimizer updates, shared by the CPU
// and CUDA kernels so that both compute the same thing: torch.optim.SGD,
// Adam and AdamW (their single-tensor versions), operation by operation.
// A rule updates elements given as v[0] the parameter, v[1] the gradient
// and v[2...] the state; it writes v[0] and the state, never the gradient.
// Its scalars have the arithmetic type S (float for f32, f16 and bf16;
// double for f64); the elements are an S each, or a short vector of S (the
// CPU kernel's SIMD lanes), hence the operators are templated on M and
// every branch is on a scalar. Scalars derived from the hyper-parameters
// are computed in double, as PyTorch's Python floats are, then rounded to S.
#pragma once

#include <cmath>
#include <cstdint>

#include "kiln/ops/op_def.hpp"

#ifdef __CUDACC__
#define KILN_OPTIM_HOST_DEVICE __host__ __device__
#else
#define KILN_OPTIM_HOST_DEVICE
#endif

namespace kiln::optim {

// torch.lerp's formula: exact at both ends.
template <class M, class S>
KILN_OPTIM_HOST_DEVICE inline M lerp(M self, M end, S weight) {
  return weight < S(0.5) ? self + weight * (end - self) : end - (end - self) * (S(1) - weight);
}

// The square root of an element (the CPU kernel specializes it for its lanes).
template <class M>
KILN_OPTIM_HOST_DEVICE inline M square_root(M x) {
  using std::sqrt;
  return sqrt(x);
}

// Lists: params, grads, and momentum buffers when Momentum.
template <class S, bool Momentum>
struct SgdRule {
  static constexpr int kLists = Momentum ? 3 : 2;
  S lr, momentum, dampening_complement, weight_decay;
  bool nesterov, maximize, first_step;

  template <class M>
  KILN_OPTIM_HOST_DEVICE void operator()(M* v) const {
    M d = maximize ? -v[1] : v[1];
    if (weight_decay != S(0)) d = d + weight_decay * v[0];
    if constexpr (Momentum) {
      // The buffer starts as the first gradient (PyTorch: "buf is None").
      v[2] = first_step ? d : v[2] * momentum + dampening_complement * d;
      d = nesterov ? d + momentum * v[2] : v[2];
    }
    v[0] = v[0] + (-lr) * d;
  }
};

// Lists: params, grads, exp_avg, exp_avg_sq, and max_exp_avg_sq when AmsGrad.
template <class S, bool AmsGrad>
struct AdamRule {
  static constexpr int kLists = AmsGrad ? 5 : 4;
  S beta1_complement, beta2, beta2_complement, eps, weight_decay;
  S decay_factor;           // 1 - lr * weight_decay when decoupled (AdamW)
  S neg_step_size;          // -lr / (1 - beta1^step)
  S bias_correction2_sqrt;  // sqrt(1 - beta2^step)
  bool decoupled, maximize;

  template <class M>
  KILN_OPTIM_HOST_DEVICE void operator()(M* v) const {
    M g = maximize ? -v[1] : v[1];
    if (decoupled) v[0] = v[0] * decay_factor;
    else if (weight_decay != S(0)) g = g + weight_decay * v[0];
    v[2] = lerp(v[2], g, beta1_complement);
    v[3] = v[3] * beta2 + beta2_complement * g * g;
    M second = v[3];
    if constexpr (AmsGrad) {
      v[4] = v[4] > v[3] ? v[4] : v[3];
      second = v[4];
    }
    const M denom = square_root(second) / bias_correction2_sqrt + eps;
    v[0] = v[0] + neg_step_size * v[2] / denom;
  }
};

// The rules' scalars from an op call's attributes (the op's schemas are in
// register.cpp).
template <class S, bool Momentum>
SgdRule<S, Momentum> sgd_rule(const OpDef& op, const Attrs& a) {
  return {S(op.attr_real(a, "lr")),
          S(op.attr_real(a, "momentum")),
          S(1 - op.attr_real(a, "dampening")),
          S(op.attr_real(a, "weight_decay")),
          op.attr_bool(a, "nesterov"),
          op.attr_bool(a, "maximize"),
          op.attr_bool(a, "first_step")};
}

template <class S, bool AmsGrad>
AdamRule<S, AmsGrad> adam_rule(const OpDef& op, const Attrs& a) {
  const double lr = op.attr_real(a, "lr"), beta1 = op.attr_real(a, "beta1"), beta2 = op.attr_real(a, "beta2");
  const double wd = op.attr_real(a, "weight_decay");
  const double step = double(op.attr_int(a, "step"));
  return {S(1 - beta1),
          S(beta2),
          S(1 - beta2),
          S(op.attr_real(a, "eps")),
          S(wd),
          S(1 - lr * wd),
          S(-(lr / (1 - std::pow(beta1, step)))),
          S(std::sqrt(1 - std::pow(beta2, step))),
          op.attr_bool(a, "decoupled"),
          op.attr_bool(a, "maximize")};
}

}  // namespace kiln::optim
