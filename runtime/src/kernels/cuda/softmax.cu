// softmax and log_softmax along one dimension, and their backward ops
// (grad, output), on a GPU: a row is the elements along the dimension, at
// stride inner. The row maximum is subtracted before exp() so it cannot
// overflow; sums run in float (double for f64).

#include "cuda_kernels.hpp"
#include "element.cuh"
#include "rows.cuh"
#include "../../ops/reduction/softmax.hpp"

namespace kiln {
namespace {

using cuda::from_math;
using cuda::RowLayout;
using cuda::Team;
using cuda::to_math;

// Rows (outer, inner) of n elements at stride inner.
RowLayout softmax_layout(const KernelCall& c, const Shape& shape) {
  const reduction::SoftmaxRows r = reduction::softmax_rows(c.op, shape, c.attrs);
  return cuda::row_layout(Shape{r.outer, r.inner}, Shape{r.n * r.inner, 1}, Shape{r.n}, Shape{r.inner});
}

template <bool Log, class T>
struct SoftmaxRow {
  const T* x;
  T* y;
  RowLayout l;
  __device__ void operator()(const Team& team, int64_t r) const {
    using A = acc_t<T>;
    const auto at = [&](int64_t k) { return to_math(x[l.at(r, k)]); };
    const A m = team.fold(l.length, -cuda::infinity<A>(), cuda::Larger{}, at);
    const A s = team.fold(l.length, A(0), cuda::Plus{}, [&](int64_t k) { return exp(at(k) - m); });
    const A log_s = log(s);
    for (int64_t k = team.lane; k < l.length; k += team.size) {
      const A shifted = at(k) - m;
      y[l.at(r, k)] = from_math<T>(Log ? shifted - log_s : exp(shifted) / s);
    }
  }
};

// softmax: gx = y (g - sum(g y)); log_softmax: gx = g - exp(y) sum(g).
template <bool Log, class T>
struct SoftmaxBackwardRow {
  const T* g;
  const T* y;
  T* gx;
  RowLayout l;
  __device__ void operator()(const Team& team, int64_t r) const {
    using A = acc_t<T>;
    const A s = team.fold(l.length, A(0), cuda::Plus{}, [&](int64_t k) {
      const int64_t i = l.at(r, k);
      return Log ? to_math(g[i]) : to_math(g[i]) * to_math(y[i]);
    });
    for (int64_t k = team.lane; k < l.length; k += team.size) {
      const int64_t i = l.at(r, k);
      const A gi = to_math(g[i]), yi = to_math(y[i]);
      gx[i] = from_math<T>(Log ? gi - exp(yi) * s : yi * (gi - s));
    }
  }
};

template <bool Log>
struct SoftmaxKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const SoftmaxRow<Log, T> row{c.inputs[0].data<T>(), c.outputs[0].data<T>(), softmax_layout(c, c.inputs[0].shape())};
    cuda::run_rows(c.op.name.c_str(), c.outputs[0].device().index, row.l.count, row.l.length, row);
  }
};

template <bool Log>
struct SoftmaxBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const SoftmaxBackwardRow<Log, T> row{c.inputs[0].data<T>(), c.inputs[1].data<T>(), c.outputs[0].data<T>(),
                                         softmax_layout(c, c.inputs[0].shape())};
    cuda::run_rows(c.op.name.c_str(), c.outputs[0].device().index, row.l.count, row.l.length, row);
  }
};

}  // namespace

void register_cuda_softmax_kernels(OpRegistry& r) {
  cuda::set_kernels<SoftmaxKernels<false>>(r, "softmax", cuda::FloatTypes{});
  cuda::set_kernels<SoftmaxKernels<true>>(r, "log_softmax", cuda::FloatTypes{});
  cuda::set_kernels<SoftmaxBackwardKernels<false>>(r, "softmax_backward", cuda::FloatTypes{});
  cuda::set_kernels<SoftmaxBackwardKernels<true>>(r, "log_softmax_backward", cuda::FloatTypes{});
}

}  // namespace kiln
