// norm (p = 1, 2, inf), logsumexp and their backward ops on a GPU, with the
// CPU's rules: the inf-norm lets a NaN win and splits its gradient among
// ties, the 2-norm's gradient is 0 where the norm is 0, and logsumexp takes
// out a finite maximum only (so -inf groups give -inf and an inf gives inf).
// The backward ops see the input and the gradient contiguous with the same
// shape, so a row writes its gradient at its input's offsets.
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "rows.cuh"
#include "kiln/runtime.hpp"
#include "../../ops/reduction/norm_order.hpp"
#include "../../ops/reduction/reduce_geometry.hpp"

namespace kiln {
namespace {

using cuda::from_math;
using cuda::RowLayout;
using cuda::Team;
using cuda::to_math;
using reduction::NormOrder;

RowLayout layout_of(const KernelCall& c, size_t input) {
  const Tensor& t = c.inputs[input];
  const reduction::ReduceGeometry g = reduction::reduce_geometry(c.op, t.shape(), t.strides(), c.attrs);
  return cuda::row_layout(g.kept_shape, g.kept_strides, g.reduced_shape, g.reduced_strides);
}

template <class A>
__device__ A sign(A v) {
  return A((v > 0) - (v < 0));
}

template <class T>
struct NormRow {
  const T* x;
  T* out;
  RowLayout l;
  NormOrder order;
  __device__ void operator()(const Team& team, int64_t r) const {
    using A = acc_t<T>;
    const auto magnitude = [&](int64_t k) { return abs(to_math(x[l.at(r, k)])); };
    A n;
    if (order == NormOrder::inf) n = team.fold(l.length, A(0), cuda::MaxOrNan{}, magnitude);
    else if (order == NormOrder::one) n = team.fold(l.length, A(0), cuda::Plus{}, magnitude);
    else n = sqrt(team.fold(l.length, A(0), cuda::Plus{}, [&](int64_t k) { return magnitude(k) * magnitude(k); }));
    if (team.lane == 0) out[r] = from_math<T>(n);
  }
};

template <class T>
struct NormGradRow {
  const T* grad;
  const T* x;
  const T* y;
  T* out;
  RowLayout l;
  NormOrder order;
  __device__ void operator()(const Team& team, int64_t r) const {
    using A = acc_t<T>;
    const A g = to_math(grad[r]), norm = to_math(y[r]);
    const auto at = [&](int64_t k) { return to_math(x[l.at(r, k)]); };
    const int64_t ties = order != NormOrder::inf ? 0 : team.fold(l.length, int64_t(0), cuda::Plus{}, [&](int64_t k) {
      return int64_t(abs(at(k)) == norm);
    });
    for (int64_t k = team.lane; k < l.length; k += team.size) {
      const A v = at(k);
      A d = 0;
      if (order == NormOrder::one) d = g * sign(v);
      else if (order == NormOrder::two) d = norm == 0 ? A(0) : g * v / norm;
      else if (abs(v) == norm) d = g * sign(v) / A(ties);
      out[l.at(r, k)] = from_math<T>(d);
    }
  }
};

// The maximum to take out of row r before exponentiating: 0 when infinite.
template <class T>
__device__ acc_t<T> finite_shift(const Team& team, const T* x, const RowLayout& l, int64_t r) {
  using A = acc_t<T>;
  const A m = team.fold(l.length, -cuda::infinity<A>(), cuda::Larger{}, [&](int64_t k) { return to_math(x[l.at(r, k)]); });
  return isinf(m) ? A(0) : m;
}

template <class T>
struct LogSumExpRow {
  const T* x;
  T* out;
  RowLayout l;
  __device__ void operator()(const Team& team, int64_t r) const {
    using A = acc_t<T>;
    const A m = finite_shift(team, x, l, r);
    const A s = team.fold(l.length, A(0), cuda::Plus{}, [&](int64_t k) { return exp(to_math(x[l.at(r, k)]) - m); });
    if (team.lane == 0) out[r] = from_math<T>(log(s) + m);
  }
};

// grad * exp(x - logsumexp).
template <class T>
struct LogSumExpGradRow {
  const T* grad;
  const T* x;
  const T* y;
  T* out;
  RowLayout l;
  __device__ void operator()(const Team& team, int64_t r) const {
    using A = acc_t<T>;
    const A g = to_math(grad[r]), lse = to_math(y[r]);
    for (int64_t k = team.lane; k < l.length; k += team.size)
      out[l.at(r, k)] = from_math<T>(g * exp(to_math(x[l.at(r, k)]) - lse));
  }
};

template <class Row>
void run(const KernelCall& c, const Row& row) {
  cuda::run_rows(c.op.name.c_str(), c.outputs[0].device().index, row.l.count, row.l.length, row);
}

struct NormKernels {
  template <class T> static void kernel(const KernelCall& c) {
    run(c, NormRow<T>{c.inputs[0].data<T>(), c.outputs[0].data<T>(), layout_of(c, 0),
                      reduction::norm_order(c.op, c.attrs)});
  }
};

struct NormBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    run(c, NormGradRow<T>{c.inputs[0].data<T>(), c.inputs[1].data<T>(), c.inputs[2].data<T>(), c.outputs[0].data<T>(),
                          layout_of(c, 1), reduction::norm_order(c.op, c.attrs)});
  }
};

struct LogSumExpKernels {
  template <class T> static void kernel(const KernelCall& c) {
    run(c, LogSumExpRow<T>{c.inputs[0].data<T>(), c.outputs[0].data<T>(), layout_of(c, 0)});
  }
};

struct LogSumExpBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    run(c, LogSumExpGradRow<T>{c.inputs[0].data<T>(), c.inputs[1].data<T>(), c.inputs[2].data<T>(),
                               c.outputs[0].data<T>(), layout_of(c, 1)});
  }
};

}  // namespace

void register_cuda_norm_kernels(OpRegistry& r) {
  cuda::set_kernels<NormKernels>(r, "norm", cuda::FloatTypes{});
  cuda::set_kernels<NormBackwardKernels>(r, "norm_backward", cuda::FloatTypes{});
  cuda::set_kernels<LogSumExpKernels>(r, "logsumexp", cuda::FloatTypes{});
  cuda::set_kernels<LogSumExpBackwardKernels>(r, "logsumexp_backward", cuda::FloatTypes{});
}

}  // namespace kiln
