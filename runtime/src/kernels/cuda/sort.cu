// sort, argsort and topk on a GPU. Each element finds its place in its row
// by counting the elements that sort before it (ties: those earlier in the
// row), which is the CPU's stable order exactly, NaN ranking above every
// number; it is written there when that place is among the first k. The
// count costs n steps per element, n^2 per row of n: fine for the rows of
// class scores and beams these ops usually see, slow for very long rows.
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "map.cuh"
#include "kiln/runtime.hpp"
#include "../../ops/reduction/sort_params.hpp"

namespace kiln {
namespace {

template <class K>
__device__ bool ascending_before(K a, K b) {
  return b != b ? a == a : a < b;  // NaN (x != x) last
}

template <bool WithValues, class T>
struct PlaceElement {
  using K = cuda::order_key_t<T>;
  const T* x;
  T* values;  // null for argsort
  int64_t* indices;
  int64_t n, inner, k;
  bool descending;

  __device__ bool before(K a, K b) const {
    return descending ? ascending_before(b, a) : ascending_before(a, b);
  }

  // e: the element's offset in the contiguous input.
  __device__ void operator()(int64_t e) const {
    const int64_t i = (e / inner) % n;  // its position along the dim
    const int64_t row_start = e - i * inner;
    const K v = K(cuda::to_math(x[e]));
    int64_t place = 0;
    for (int64_t j = 0; j < n; ++j) {
      const K w = K(cuda::to_math(x[row_start + j * inner]));
      place += before(w, v) || (j < i && !before(v, w));
    }
    if (place >= k) return;
    const int64_t out = (e / (n * inner)) * k * inner + e % inner + place * inner;
    indices[out] = i;
    if constexpr (WithValues) values[out] = x[e];
  }
};

template <bool WithValues>
struct SortKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& in = c.inputs[0];
    const reduction::SortParams p = reduction::sort_params(c.op, in.shape(), c.attrs);
    if (p.k == 0) return;
    const PlaceElement<WithValues, T> place{in.data<T>(), WithValues ? c.outputs[0].data<T>() : nullptr,
                                            c.outputs[WithValues ? 1 : 0].data<int64_t>(), p.rows.n, p.rows.inner,
                                            p.k, p.descending};
    cuda::run_for_each(c.op.name.c_str(), in, in.numel(), place);
  }
};

}  // namespace

void register_cuda_sort_kernels(OpRegistry& r) {
  cuda::set_kernels<SortKernels<true>>(r, "sort", cuda::NumericTypes{});
  cuda::set_kernels<SortKernels<false>>(r, "argsort", cuda::NumericTypes{});
  cuda::set_kernels<SortKernels<true>>(r, "topk", cuda::NumericTypes{});
}

}  // namespace kiln
