// Losses on a GPU: mse_loss and bce_with_logits (element by element), and
// cross_entropy (log-softmax and negative log likelihood fused, with
// ignore_index and label_smoothing) and nll_loss over class scores [N, C]
// or [N, C, d1...], with reduction "none", "sum" or "mean", and their
// backward ops. Values are computed in float (double for f64); reduced
// losses sum per-element values in a fixed order (total.cuh). Class targets
// are checked against the class count, as on the CPU.

#include "cuda_kernels.hpp"
#include "element.cuh"
#include "index_check.cuh"
#include "map.cuh"
#include "rows.cuh"
#include "total.cuh"
#include "../../ops/reduction/common.hpp"

namespace kiln {
namespace {

using cuda::BadIndexSlot;
using cuda::from_math;
using cuda::RowLayout;
using cuda::Team;
using cuda::to_math;
using reduction::LossReduction;

// ---- pointwise losses ----------------------------------------------------------

struct MseLoss {
  template <class A> __device__ static A loss(A x, A t) { return (x - t) * (x - t); }
  template <class A> __device__ static A d_input(A x, A t) { return 2 * (x - t); }
  template <class A> __device__ static A d_target(A x, A t) { return -2 * (x - t); }
};

// max(x, 0) - x t + log(1 + exp(-|x|)): never exponentiates a large positive
// number, so it holds for any logit.
struct BceWithLogitsLoss {
  template <class A> __device__ static A loss(A x, A t) { return max(x, A(0)) - x * t + log1p(exp(-abs(x))); }
  template <class A> __device__ static A d_input(A x, A t) {
    const A e = exp(-abs(x));  // sigmoid without overflow on either side
    return (x >= 0 ? 1 / (1 + e) : e / (1 + e)) - t;
  }
  template <class A> __device__ static A d_target(A x, A) { return -x; }
};

template <class Loss, class Out, class T>
struct LossAt {
  __device__ Out operator()(T x, T t) const { return from_math<Out>(Loss::loss(to_math(x), to_math(t))); }
};

template <class Loss>
struct PointwiseLossKernels {
  template <class T> static void kernel(const KernelCall& c) {
    using A = acc_t<T>;
    const Tensor& x = c.inputs[0];
    const LossReduction red = reduction::parse_loss_reduction(c.op, c.attrs);
    if (red == LossReduction::none) {
      cuda::Map<T, T, T>::run_dense(c.op.name.c_str(), c.outputs[0], LossAt<Loss, T, T>{}, x, c.inputs[1]);
      return;
    }
    Tensor losses = c.runtime.empty(x.shape(), dtype_of<A>::value, x.device());
    cuda::Map<A, T, T>::run_dense(c.op.name.c_str(), losses, LossAt<Loss, A, T>{}, x, c.inputs[1]);
    const A divisor = red == LossReduction::mean ? A(x.numel()) : A(1);
    cuda::total_into<T, A>(c.runtime, losses, Tensor(), divisor, c.outputs[0]);
  }
};

// One of the two gradients: scale * d(x, t), scale the output gradient
// (shared by every element when the loss was reduced) over the divisor.
template <class Loss, bool ForInput, class T>
struct LossGrad {
  acc_t<T> divisor;
  __device__ T operator()(T g, T x, T t) const {
    using A = acc_t<T>;
    const A scale = to_math(g) / divisor, xi = to_math(x), ti = to_math(t);
    return from_math<T>(scale * (ForInput ? Loss::d_input(xi, ti) : Loss::d_target(xi, ti)));
  }
};

// (grad, input, target) -> (grad of input, grad of target). A reduced
// loss's one-element grad broadcasts over the elements.
template <class Loss>
struct PointwiseLossBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    using A = acc_t<T>;
    const Tensor& g = c.inputs[0];
    const Tensor& x = c.inputs[1];
    const LossReduction red = reduction::parse_loss_reduction(c.op, c.attrs);
    const A divisor = red == LossReduction::mean ? A(x.numel()) : A(1);
    const char* name = c.op.name.c_str();
    cuda::Map<T, T, T, T>::run(name, c.outputs[0], LossGrad<Loss, true, T>{divisor}, g, x, c.inputs[2]);
    cuda::Map<T, T, T, T>::run(name, c.outputs[1], LossGrad<Loss, false, T>{divisor}, g, x, c.inputs[2]);
  }
};

// ---- class losses ------------------------------------------------------------------

// Rows of C scores at stride d1*d2*...: one per (n, d...) position.
RowLayout class_rows(const Shape& scores) {
  int64_t inner = 1;
  for (int i = 2; i < scores.rank(); ++i) inner *= scores[i];
  const int64_t classes = scores[1];
  return cuda::row_layout(Shape{scores[0], inner}, Shape{classes * inner, 1}, Shape{classes}, Shape{inner});
}

// The class of row r, or -1 when the row is ignored (reporting a target
// outside [0, C)).
template <class I>
__device__ int64_t row_class(const I* targets, int64_t r, int64_t classes, int64_t ignore, const BadIndexSlot& bad) {
  const int64_t t = int64_t(targets[r]);
  if (t == ignore) return -1;
  if (t < 0 || t >= classes) {
    bad.report(r);
    return -1;
  }
  return t;
}

// max + log(sum(exp(x - max))) over row r, for every lane.
template <class T>
__device__ acc_t<T> row_log_sum_exp(const Team& team, const T* x, const RowLayout& l, int64_t r) {
  using A = acc_t<T>;
  const auto at = [&](int64_t k) { return to_math(x[l.at(r, k)]); };
  const A m = team.fold(l.length, -cuda::infinity<A>(), cuda::Larger{}, at);
  return m + log(team.fold(l.length, A(0), cuda::Plus{}, [&](int64_t k) { return exp(at(k) - m); }));
}

// loss = (1 - eps) * -log p_t + eps * mean_c(-log p_c)
//      = lse - (1 - eps) x_t - eps / C * sum_c x_c
struct CrossEntropy {
  static constexpr const char* name = "cross_entropy";
  template <class T, class A>
  __device__ static A loss(const Team& team, const T* x, const RowLayout& l, int64_t r, int64_t t, A eps) {
    const A lse = row_log_sum_exp(team, x, l, r);
    const A sum_x =
        eps != A(0) ? team.fold(l.length, A(0), cuda::Plus{}, [&](int64_t k) { return to_math(x[l.at(r, k)]); })
                    : A(0);
    return lse - (1 - eps) * to_math(x[l.at(r, t)]) - eps / A(l.length) * sum_x;
  }
  // d loss / d x_c = softmax_c - (1 - eps) [c == t] - eps / C
  template <class T, class A>
  __device__ static void grad(const Team& team, const T* x, T* gx, const RowLayout& l, int64_t r, int64_t t, A eps,
                              A scale) {
    const A lse = row_log_sum_exp(team, x, l, r);
    for (int64_t k = team.lane; k < l.length; k += team.size) {
      const int64_t i = l.at(r, k);
      const A target = (k == t ? 1 - eps : A(0)) + eps / A(l.length);
      gx[i] = from_math<T>(scale * (exp(to_math(x[i]) - lse) - target));
    }
  }
};

struct NllLoss {
  static constexpr const char* name = "nll_loss";
  template <class T, class A>
  __device__ static A loss(const Team&, const T* x, const RowLayout& l, int64_t r, int64_t t, A) {
    return -to_math(x[l.at(r, t)]);
  }
  template <class T, class A>
  __device__ static void grad(const Team& team, const T*, T* gx, const RowLayout& l, int64_t r, int64_t t, A,
                              A scale) {
    for (int64_t k = team.lane; k < l.length; k += team.size)
      gx[l.at(r, k)] = from_math<T>(k == t ? -scale : A(0));
  }
};

// Row r's loss and whether it counts (not ignored).
template <class Loss, class T, class I>
struct ClassLossRow {
  using A = acc_t<T>;
  const T* x;
  const I* targets;
  A* losses;
  A* counted;
  RowLayout l;
  int64_t ignore;
  A eps;
  BadIndexSlot bad;
  __device__ void operator()(const Team& team, int64_t r) const {
    const int64_t t = row_class(targets, r, l.length, ignore, bad);
    const A loss = t >= 0 ? Loss::loss(team, x, l, r, t, eps) : A(0);
    if (team.lane == 0) {
      losses[r] = loss;
      counted[r] = t >= 0 ? A(1) : A(0);
    }
  }
};

// Throws the CPU kernel's error for the first target out of range.
void throw_if_bad_target(const cuda::IndexCheck& check, const KernelCall& c, int64_t classes) {
  const auto bad = check.first_bad();
  if (!bad) return;
  const int64_t ignore = c.op.attr_int(c.attrs, "ignore_index");
  throw_error(Status::invalid_argument,
              str_cat("op '", c.op.name, "': target ", bad->index, " at position ", bad->position,
                      " is out of range for ", classes, " classes (expected 0 <= target < ", classes,
                      " or ignore_index ", ignore, ")"));
}

template <class T>
acc_t<T> label_smoothing(const KernelCall& c) {
  return c.op.attr_index("label_smoothing") >= 0 ? acc_t<T>(c.op.attr_real(c.attrs, "label_smoothing")) : acc_t<T>(0);
}

template <class T>
struct FromMath {
  __device__ T operator()(acc_t<T> v) const { return from_math<T>(v); }
};

template <class Loss>
struct ClassLossKernels {
  template <class T> static void kernel(const KernelCall& c) {
    using A = acc_t<T>;
    const Tensor& x = c.inputs[0];
    const Tensor& targets = c.inputs[1];
    const RowLayout l = class_rows(x.shape());
    Tensor losses = c.runtime.empty(targets.shape(), dtype_of<A>::value, x.device());
    const Tensor counted = c.runtime.empty(targets.shape(), dtype_of<A>::value, x.device());
    const cuda::IndexCheck check(c.runtime, targets);
    reduction::visit_index_dtype(targets.dtype(), [&]<class I>() {
      const ClassLossRow<Loss, T, I> row{x.data<T>(), targets.data<I>(), losses.data<A>(), counted.data<A>(), l,
                                         c.op.attr_int(c.attrs, "ignore_index"), label_smoothing<T>(c), check.slot()};
      cuda::run_rows(Loss::name, x.device().index, l.count, l.length, row);
    });
    throw_if_bad_target(check, c, l.length);
    switch (reduction::parse_loss_reduction(c.op, c.attrs)) {
      case LossReduction::none: cuda::Map<T, A>::run_dense(Loss::name, c.outputs[0], FromMath<T>{}, losses); break;
      case LossReduction::sum: cuda::total_into<T, A>(c.runtime, losses, Tensor(), A(1), c.outputs[0]); break;
      case LossReduction::mean: cuda::total_into<T, A>(c.runtime, losses, counted, A(1), c.outputs[0]); break;
    }
  }
};

// 1 where a target counts towards "mean", 0 where it is ignore_index.
template <class A, class I>
struct Counts {
  int64_t ignore;
  __device__ A operator()(I t) const { return int64_t(t) == ignore ? A(0) : A(1); }
};

// Zeros, then the loss gradient for every row that is not ignored, scaled
// by its share of the output gradient.
template <class Loss, class T, class I>
struct ClassLossGradRow {
  using A = acc_t<T>;
  const T* g;
  const T* x;
  const I* targets;
  T* gx;
  RowLayout l;
  int64_t ignore;
  A eps;
  bool per_row;     // reduction "none": grad has one element per row
  const A* counted;  // "mean": the number of rows counted; null otherwise
  BadIndexSlot bad;
  __device__ void operator()(const Team& team, int64_t r) const {
    const int64_t t = row_class(targets, r, l.length, ignore, bad);
    if (t < 0) {
      for (int64_t k = team.lane; k < l.length; k += team.size) gx[l.at(r, k)] = from_math<T>(A(0));
      return;
    }
    A scale = to_math(g[per_row ? r : 0]);
    if (counted) scale /= *counted;
    Loss::grad(team, x, gx, l, r, t, eps, scale);
  }
};

template <class Loss>
struct ClassLossBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    using A = acc_t<T>;
    const Tensor& x = c.inputs[1];
    const Tensor& targets = c.inputs[2];
    const RowLayout l = class_rows(x.shape());
    const LossReduction red = reduction::parse_loss_reduction(c.op, c.attrs);
    const int64_t ignore = c.op.attr_int(c.attrs, "ignore_index");
    const cuda::IndexCheck check(c.runtime, targets);
    reduction::visit_index_dtype(targets.dtype(), [&]<class I>() {
      Tensor counted;
      if (red == LossReduction::mean) {
        Tensor flags = c.runtime.empty(targets.shape(), dtype_of<A>::value, x.device());
        cuda::Map<A, I>::run_dense(Loss::name, flags, Counts<A, I>{ignore}, targets);
        counted = c.runtime.empty({1}, dtype_of<A>::value, x.device());
        cuda::total_into<A, A>(c.runtime, flags, Tensor(), A(1), counted);
      }
      const ClassLossGradRow<Loss, T, I> row{c.inputs[0].data<T>(),
                                             x.data<T>(),
                                             targets.data<I>(),
                                             c.outputs[0].data<T>(),
                                             l,
                                             ignore,
                                             label_smoothing<T>(c),
                                             red == LossReduction::none,
                                             counted.defined() ? counted.data<A>() : nullptr,
                                             check.slot()};
      cuda::run_rows(Loss::name, x.device().index, l.count, l.length, row);
    });
    throw_if_bad_target(check, c, l.length);
  }
};

}  // namespace

void register_cuda_loss_kernels(OpRegistry& r) {
  cuda::set_kernels<PointwiseLossKernels<MseLoss>>(r, "mse_loss", cuda::FloatTypes{});
  cuda::set_kernels<PointwiseLossKernels<BceWithLogitsLoss>>(r, "bce_with_logits", cuda::FloatTypes{});
  cuda::set_kernels<PointwiseLossBackwardKernels<MseLoss>>(r, "mse_loss_backward", cuda::FloatTypes{});
  cuda::set_kernels<PointwiseLossBackwardKernels<BceWithLogitsLoss>>(r, "bce_with_logits_backward",
                                                                     cuda::FloatTypes{});
  cuda::set_kernels<ClassLossKernels<CrossEntropy>>(r, "cross_entropy", cuda::FloatTypes{});
  cuda::set_kernels<ClassLossKernels<NllLoss>>(r, "nll_loss", cuda::FloatTypes{});
  cuda::set_kernels<ClassLossBackwardKernels<CrossEntropy>>(r, "cross_entropy_backward", cuda::FloatTypes{});
  cuda::set_kernels<ClassLossBackwardKernels<NllLoss>>(r, "nll_loss_backward", cuda::FloatTypes{});
}

}  // namespace kiln
