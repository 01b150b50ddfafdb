// any and all over dimensions on a GPU, for every dtype: each row counts
// the elements whose truth differs from the empty answer (non-zero for any,
// zero for all; NaN is non-zero).
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "rows.cuh"
#include "kiln/runtime.hpp"
#include "../../ops/reduction/reduce_geometry.hpp"

namespace kiln {
namespace {

template <bool All>
struct LogicalRow {
  template <class T>
  struct Of {
    const T* x;
    bool* out;
    cuda::RowLayout l;
    __device__ void operator()(const cuda::Team& team, int64_t r) const {
      const int64_t found = team.fold(l.length, int64_t(0), cuda::Plus{}, [&](int64_t k) {
        return int64_t(cuda::convert<bool>(x[l.at(r, k)]) != All);
      });
      if (team.lane == 0) out[r] = (found > 0) != All;
    }
  };
};

template <bool All>
struct LogicalKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& in = c.inputs[0];
    const reduction::ReduceGeometry g = reduction::reduce_geometry(c.op, in.shape(), in.strides(), c.attrs);
    const typename LogicalRow<All>::template Of<T> row{
        in.data<T>(), c.outputs[0].data<bool>(),
        cuda::row_layout(g.kept_shape, g.kept_strides, g.reduced_shape, g.reduced_strides)};
    cuda::run_rows(c.op.name.c_str(), in.device().index, row.l.count, row.l.length, row);
  }
};

}  // namespace

void register_cuda_logical_reduce_kernels(OpRegistry& r) {
  cuda::set_kernels<LogicalKernels<false>>(r, "any", cuda::AllTypes{});
  cuda::set_kernels<LogicalKernels<true>>(r, "all", cuda::AllTypes{});
}

}  // namespace kiln
