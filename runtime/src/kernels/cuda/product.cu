// prod, prod_backward, cumsum and cumsum_backward on a GPU, with the result
// types of the CPU (product_types.hpp). prod folds each row in a fixed
// order; cumsum runs one thread per row along the dimension, which keeps
// the CPU's order of additions (and its rounding) at the cost of speed on
// few long rows.
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "map.cuh"
#include "rows.cuh"
#include "kiln/runtime.hpp"
#include "../../ops/reduction/dim_rows.hpp"
#include "../../ops/reduction/product_types.hpp"
#include "../../ops/reduction/reduce_geometry.hpp"

namespace kiln {
namespace {

using cuda::from_math;
using cuda::RowLayout;
using cuda::Team;
using cuda::to_math;
using reduction::fold_t;
using reduction::result_t;

template <class T>
__device__ fold_t<T> load_fold(T v) {
  return fold_t<T>(to_math(v));
}

template <class T>
__device__ result_t<T> store_fold(fold_t<T> v) {
  if constexpr (std::is_integral_v<T>) return v;
  else return from_math<T>(v);
}

RowLayout layout_of(const reduction::ReduceGeometry& g) {
  return cuda::row_layout(g.kept_shape, g.kept_strides, g.reduced_shape, g.reduced_strides);
}

template <class T>
struct ProdRow {
  const T* x;
  result_t<T>* out;
  RowLayout l;
  __device__ void operator()(const Team& team, int64_t r) const {
    const fold_t<T> p = team.fold(l.length, fold_t<T>(1), cuda::Times{}, [&](int64_t k) { return load_fold(x[l.at(r, k)]); });
    if (team.lane == 0) out[r] = store_fold<T>(p);
  }
};

struct ProdKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& in = c.inputs[0];
    const ProdRow<T> row{in.data<T>(), c.outputs[0].data<result_t<T>>(),
                         layout_of(reduction::reduce_geometry(c.op, in.shape(), in.strides(), c.attrs))};
    cuda::run_rows("prod", in.device().index, row.l.count, row.l.length, row);
  }
};

// prod_backward(grad, input, output), as the CPU's: without a zero in the
// row, grad * prod / x; with one zero, only the zero gets grad times the
// product of the others; with several, 0 everywhere. The input and the
// gradient are contiguous with the same shape, so they share offsets.
template <class T>
struct ProdGradRow {
  const T* grad;
  const T* x;
  const T* y;
  T* out;
  RowLayout l;
  __device__ void operator()(const Team& team, int64_t r) const {
    using A = acc_t<T>;
    const auto at = [&](int64_t k) { return to_math(x[l.at(r, k)]); };
    const int64_t zeros = team.fold(l.length, int64_t(0), cuda::Plus{}, [&](int64_t k) { return int64_t(at(k) == 0); });
    const A others = team.fold(l.length, A(1), cuda::Times{}, [&](int64_t k) { return at(k) == 0 ? A(1) : at(k); });
    const A g = to_math(grad[r]), product = to_math(y[r]);
    for (int64_t k = team.lane; k < l.length; k += team.size) {
      const A v = at(k);
      A d = 0;
      if (zeros == 0) d = g * product / v;
      else if (zeros == 1 && v == 0) d = g * others;
      out[l.at(r, k)] = from_math<T>(d);
    }
  }
};

struct ProdBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& x = c.inputs[1];
    const ProdGradRow<T> row{c.inputs[0].data<T>(), x.data<T>(), c.inputs[2].data<T>(), c.outputs[0].data<T>(),
                             layout_of(reduction::reduce_geometry(c.op, x.shape(), c.attrs))};
    cuda::run_rows("prod_backward", x.device().index, row.l.count, row.l.length, row);
  }
};

// The running sum of row r, front to back, or back to front for
// cumsum_backward.
template <bool Reverse, class T>
struct CumsumRow {
  const T* x;
  result_t<T>* out;
  int64_t n, inner;
  __device__ void operator()(int64_t r) const {
    const int64_t base = (r / inner) * n * inner + r % inner;
    fold_t<T> sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = base + (Reverse ? n - 1 - j : j) * inner;
      sum += load_fold(x[i]);
      out[i] = store_fold<T>(sum);
    }
  }
};

template <bool Reverse>
struct CumsumKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const reduction::DimRows s = reduction::dim_rows(c.op, c.inputs[0].shape(), c.attrs);
    const CumsumRow<Reverse, T> row{c.inputs[0].data<T>(), c.outputs[0].data<result_t<T>>(), s.n, s.inner};
    cuda::run_for_each(c.op.name.c_str(), c.outputs[0], s.count(), row);
  }
};

}  // namespace

void register_cuda_product_kernels(OpRegistry& r) {
  cuda::set_kernels<ProdKernels>(r, "prod", cuda::AllTypes{});
  cuda::set_kernels<ProdBackwardKernels>(r, "prod_backward", cuda::FloatTypes{});
  cuda::set_kernels<CumsumKernels<false>>(r, "cumsum", cuda::AllTypes{});
  cuda::set_kernels<CumsumKernels<true>>(r, "cumsum_backward", cuda::FloatTypes{});
}

}  // namespace kiln
