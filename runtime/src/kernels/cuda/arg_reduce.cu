// max_dim, min_dim, argmax and argmin on a GPU, in every dtype with an
// order. Two folds per row: the extreme value (a NaN winning), then the
// smallest index holding it, so ties give the first index as on the CPU.
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "rows.cuh"
#include "kiln/runtime.hpp"
#include "../../ops/reduction/arg_geometry.hpp"

namespace kiln {
namespace {

using cuda::RowLayout;
using cuda::Team;

template <bool Largest, bool WithValues>
struct ArgRow {
  template <class T>
  struct Of {
    const T* x;
    T* values;  // null for argmax and argmin
    int64_t* indices;
    RowLayout l;
    __device__ void operator()(const Team& team, int64_t r) const {
      using K = cuda::order_key_t<T>;
      const auto at = [&](int64_t k) { return K(cuda::to_math(x[l.at(r, k)])); };
      const K m = Largest ? team.fold(l.length, at(0), cuda::MaxOrNan{}, at)
                          : team.fold(l.length, at(0), cuda::MinOrNan{}, at);
      const bool nan = m != m;
      const int64_t best = team.fold(l.length, l.length, cuda::Smaller{}, [&](int64_t k) {
        const K v = at(k);
        return v == m || (nan && v != v) ? k : l.length;
      });
      if (team.lane != 0) return;
      indices[r] = best;
      if constexpr (WithValues) values[r] = x[l.at(r, best)];
    }
  };
};

template <bool Largest, bool WithValues>
struct ArgKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const reduction::ReduceGeometry g = reduction::arg_geometry(c.op, c.inputs[0], c.attrs);
    const typename ArgRow<Largest, WithValues>::template Of<T> row{
        c.inputs[0].data<T>(), WithValues ? c.outputs[0].data<T>() : nullptr,
        c.outputs[WithValues ? 1 : 0].data<int64_t>(),
        cuda::row_layout(g.kept_shape, g.kept_strides, g.reduced_shape, g.reduced_strides)};
    cuda::run_rows(c.op.name.c_str(), c.inputs[0].device().index, row.l.count, row.l.length, row);
  }
};

}  // namespace

void register_cuda_arg_reduce_kernels(OpRegistry& r) {
  cuda::set_kernels<ArgKernels<true, true>>(r, "max_dim", cuda::NumericTypes{});
  cuda::set_kernels<ArgKernels<false, true>>(r, "min_dim", cuda::NumericTypes{});
  cuda::set_kernels<ArgKernels<true, false>>(r, "argmax", cuda::NumericTypes{});
  cuda::set_kernels<ArgKernels<false, false>>(r, "argmin", cuda::NumericTypes{});
}

}  // namespace kiln
