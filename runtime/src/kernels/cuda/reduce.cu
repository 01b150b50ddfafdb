// sum, mean, max, min, var and std over dimensions (any input layout,
// keepdim), their backward ops, and sum_to (a broadcast gradient summed back
// to an operand's shape), on a GPU. Each output element folds its row in
// float (double for f64), as the CPU does; max and min let a NaN win and
// split the gradient evenly among tied extremes; var and std take two passes
// (mean, then squared deviations).
#include <array>
#include <vector>

#include "cuda_kernels.hpp"
#include "element.cuh"
#include "map.cuh"
#include "rows.cuh"
#include "kiln/runtime.hpp"
#include "../../ops/reduction/reduce_geometry.hpp"

namespace kiln {
namespace {

using cuda::from_math;
using cuda::RowLayout;
using cuda::Team;
using cuda::to_math;

cuda::RowLayout layout_of(const reduction::ReduceGeometry& g) {
  return cuda::row_layout(g.kept_shape, g.kept_strides, g.reduced_shape, g.reduced_strides);
}

reduction::ReduceGeometry input_geometry(const KernelCall& c) {
  return reduction::reduce_geometry(c.op, c.inputs[0].shape(), c.inputs[0].strides(), c.attrs);
}

// Which dimensions of `shape` the op's "dims" attribute reduces (all when empty).
std::array<bool, kMaxDims> reduced_dims(const OpDef& op, const Shape& shape, const Attrs& attrs) {
  std::array<bool, kMaxDims> reduced{};
  const std::vector<int64_t>& dims = op.attr_ints(attrs, "dims");
  for (int d = 0; d < shape.rank(); ++d) reduced[size_t(d)] = dims.empty();
  for (int64_t d : dims) reduced[size_t(normalize_dim(int(d), shape.rank(), op.name.c_str()))] = true;
  return reduced;
}

// Offsets for the elements of a contiguous tensor of `shape` (the input of
// a reduction): operand k reads the element itself where own[k], else the
// output element it folds into.
template <size_t N>
cuda::OffsetMap<N> input_to_output(const Shape& shape, const std::array<bool, kMaxDims>& reduced,
                                   const std::array<bool, N>& own) {
  cuda::OffsetMap<N> m{};
  m.rank = shape.rank();
  int64_t whole = 1, kept = 1;
  for (int d = m.rank - 1; d >= 0; --d) {
    m.sizes[d] = shape[d];
    for (size_t k = 0; k < N; ++k) m.strides[k][d] = own[k] ? whole : reduced[size_t(d)] ? 0 : kept;
    whole *= shape[d];
    if (!reduced[size_t(d)]) kept *= shape[d];
  }
  return m;
}

// out[r] = sum(row r) / divisor (1 for sum, the count for mean).
template <class T>
struct SumRow {
  const T* x;
  T* out;
  RowLayout l;
  acc_t<T> divisor;
  __device__ void operator()(const Team& team, int64_t r) const {
    using A = acc_t<T>;
    const A s = team.fold(l.length, A(0), cuda::Plus{}, [&](int64_t k) { return to_math(x[l.at(r, k)]); });
    if (team.lane == 0) out[r] = from_math<T>(s / divisor);
  }
};

// The maximum (Largest) or minimum of the row.
template <bool Largest>
struct ExtremeRow {
  template <class T>
  struct Of {
    const T* x;
    T* out;
    RowLayout l;
    __device__ void operator()(const Team& team, int64_t r) const {
      using A = acc_t<T>;
      const auto at = [&](int64_t k) { return to_math(x[l.at(r, k)]); };
      const A m = Largest ? team.fold(l.length, -cuda::infinity<A>(), cuda::MaxOrNan{}, at)
                          : team.fold(l.length, cuda::infinity<A>(), cuda::MinOrNan{}, at);
      if (team.lane == 0) out[r] = from_math<T>(m);
    }
  };
};

// The variance of the row, or its square root (std) when Root.
template <bool Root>
struct VarRow {
  template <class T>
  struct Of {
    const T* x;
    T* out;
    RowLayout l;
    acc_t<T> divisor;
    __device__ void operator()(const Team& team, int64_t r) const {
      using A = acc_t<T>;
      const auto at = [&](int64_t k) { return to_math(x[l.at(r, k)]); };
      const A mean = team.fold(l.length, A(0), cuda::Plus{}, at) / A(l.length);
      const A ss = team.fold(l.length, A(0), cuda::Plus{}, [&](int64_t k) {
        const A d = at(k) - mean;
        return d * d;
      });
      if (team.lane == 0) out[r] = from_math<T>(Root ? sqrt(ss / divisor) : ss / divisor);
    }
  };
};

// torch.var: the divisor is N - correction, clamped at 0 (giving inf or NaN).
double var_divisor(const KernelCall& c, int64_t count) {
  return double(std::max<int64_t>(0, count - c.op.attr_int(c.attrs, "correction")));
}

template <class T, template <class> class Row, class... Extra>
void run_row(const KernelCall& c, const reduction::ReduceGeometry& g, Extra... extra) {
  const Row<T> row{c.inputs[0].data<T>(), c.outputs[0].data<T>(), layout_of(g), extra...};
  cuda::run_rows(c.op.name.c_str(), c.outputs[0].device().index, row.l.count, row.l.length, row);
}

struct SumKernels {
  template <class T> static void kernel(const KernelCall& c) { run_row<T, SumRow>(c, input_geometry(c), acc_t<T>(1)); }
};

struct MeanKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const reduction::ReduceGeometry g = input_geometry(c);
    run_row<T, SumRow>(c, g, acc_t<T>(g.reduced_count));
  }
};

template <bool Largest>
struct ExtremeKernels {
  template <class T> static void kernel(const KernelCall& c) {
    run_row<T, ExtremeRow<Largest>::template Of>(c, input_geometry(c));
  }
};

template <bool Root>
struct VarKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const reduction::ReduceGeometry g = input_geometry(c);
    run_row<T, VarRow<Root>::template Of>(c, g, acc_t<T>(var_divisor(c, g.reduced_count)));
  }
};

// sum_to: the dimensions the target lacks, or has as 1 where the input does
// not, are summed; the kept ones are the target's in order.
struct SumToKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& in = c.inputs[0];
    const Shape& target = c.outputs[0].shape();
    const int lead = in.rank() - target.rank();
    reduction::ReduceGeometry g;
    for (int d = 0; d < in.rank(); ++d) {
      const bool summed = d < lead || (target[d - lead] == 1 && in.shape()[d] != 1);
      (summed ? g.reduced_shape : g.kept_shape).push_back(in.shape()[d]);
      (summed ? g.reduced_strides : g.kept_strides).push_back(in.strides()[d]);
    }
    g.reduced_count = g.reduced_shape.numel();
    run_row<T, SumRow>(c, g, acc_t<T>(1));
  }
};

// ---- backward ops --------------------------------------------------------------

template <class T>
struct Scaled {
  acc_t<T> scale;
  __device__ T operator()(T g) const { return from_math<T>(to_math(g) * scale); }
};

// sum_backward(grad): grad * scale spread back over the reduced dims.
struct SumBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    Tensor& gx = c.outputs[0];
    const auto to_grad = input_to_output<1>(gx.shape(), reduced_dims(c.op, gx.shape(), c.attrs), {false});
    cuda::Map<T, T>::run_mapped("sum_backward", gx, Scaled<T>{acc_t<T>(c.op.attr_real(c.attrs, "scale"))}, to_grad,
                                c.inputs[0]);
  }
};

// share[r] = grad[r] / (the number of elements equal to the maximum), or 0.
template <class T>
struct TieShareRow {
  const T* x;
  const T* y;
  const T* grad;
  T* share;
  RowLayout l;
  __device__ void operator()(const Team& team, int64_t r) const {
    using A = acc_t<T>;
    const A m = to_math(y[r]);
    const int64_t ties =
        team.fold(l.length, int64_t(0), cuda::Plus{}, [&](int64_t k) { return int64_t(to_math(x[l.at(r, k)]) == m); });
    if (team.lane == 0) share[r] = from_math<T>(ties ? to_math(grad[r]) / A(ties) : A(0));
  }
};

template <class T>
struct ShareToMaxima {
  __device__ T operator()(T x, T y, T share) const {
    return to_math(x) == to_math(y) ? share : from_math<T>(acc_t<T>(0));
  }
};

// max_backward(grad, input, output): the gradient goes to the elements equal
// to the output, split evenly among ties (min's backward too).
struct MaxBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& x = c.inputs[1];
    const reduction::ReduceGeometry g = reduction::reduce_geometry(c.op, x.shape(), c.attrs);
    Tensor share = c.runtime.empty(g.kept_shape, x.dtype(), x.device());
    const TieShareRow<T> row{x.data<T>(), c.inputs[2].data<T>(), c.inputs[0].data<T>(), share.data<T>(), layout_of(g)};
    cuda::run_rows("max_backward", x.device().index, row.l.count, row.l.length, row);
    const auto map = input_to_output<3>(x.shape(), reduced_dims(c.op, x.shape(), c.attrs), {true, false, false});
    cuda::Map<T, T, T, T>::run_mapped("max_backward", c.outputs[0], ShareToMaxima<T>{}, map, x, c.inputs[2], share);
  }
};

// mean[r] of each row, kept in the arithmetic type.
template <class T>
struct MeanRow {
  const T* x;
  acc_t<T>* mean;
  RowLayout l;
  __device__ void operator()(const Team& team, int64_t r) const {
    using A = acc_t<T>;
    const A s = team.fold(l.length, A(0), cuda::Plus{}, [&](int64_t k) { return to_math(x[l.at(r, k)]); });
    if (team.lane == 0) mean[r] = s / A(l.length);
  }
};

// grad * 2 (x - mean) / divisor.
template <class T>
struct VarGrad {
  acc_t<T> divisor;
  __device__ T operator()(T x, T grad, acc_t<T> mean) const {
    const acc_t<T> k = 2 * to_math(grad) / divisor;
    return from_math<T>(k * (to_math(x) - mean));
  }
};

struct VarBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    using A = acc_t<T>;
    const Tensor& x = c.inputs[1];
    const reduction::ReduceGeometry g = reduction::reduce_geometry(c.op, x.shape(), c.attrs);
    Tensor mean = c.runtime.empty(g.kept_shape, dtype_of<A>::value, x.device());
    const MeanRow<T> row{x.data<T>(), mean.data<A>(), layout_of(g)};
    cuda::run_rows("var_backward", x.device().index, row.l.count, row.l.length, row);
    const auto map = input_to_output<3>(x.shape(), reduced_dims(c.op, x.shape(), c.attrs), {true, false, false});
    const VarGrad<T> grad{A(var_divisor(c, g.reduced_count))};
    cuda::Map<T, T, T, A>::run_mapped("var_backward", c.outputs[0], grad, map, x, c.inputs[0], mean);
  }
};

}  // namespace

void register_cuda_reduce_kernels(OpRegistry& r) {
  cuda::set_kernels<SumKernels>(r, "sum", cuda::FloatTypes{});
  cuda::set_kernels<MeanKernels>(r, "mean", cuda::FloatTypes{});
  cuda::set_kernels<ExtremeKernels<true>>(r, "max", cuda::FloatTypes{});
  cuda::set_kernels<ExtremeKernels<false>>(r, "min", cuda::FloatTypes{});
  cuda::set_kernels<VarKernels<false>>(r, "var", cuda::FloatTypes{});
  cuda::set_kernels<VarKernels<true>>(r, "std", cuda::FloatTypes{});
  cuda::set_kernels<SumToKernels>(r, "sum_to", cuda::FloatTypes{});
  cuda::set_kernels<SumBackwardKernels>(r, "sum_backward", cuda::FloatTypes{});
  cuda::set_kernels<MaxBackwardKernels>(r, "max_backward", cuda::FloatTypes{});
  cuda::set_kernels<VarBackwardKernels>(r, "var_backward", cuda::FloatTypes{});
}

}  // namespace kiln
