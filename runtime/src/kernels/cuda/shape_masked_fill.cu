// masked_fill on a GPU: the element-wise map with the bool mask broadcast
// to the input's shape; both are read in any layout.
#include "element.cuh"
#include "map.cuh"
#include "../../ops/shape/families.hpp"
#include "../../ops/shape/remap.hpp"

namespace kiln::shape {
namespace {

template <class T>
struct FillWhere {
  T fill;
  __device__ T operator()(T x, bool m) const { return m ? fill : x; }
};

struct MaskedFillKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const FillWhere<T> f{fill_as<T>(c.op.attr_real(c.attrs, "value"))};
    cuda::Map<T, T, bool>::run("masked_fill", c.outputs[0], f, c.inputs[0], c.inputs[1]);
  }
};

}  // namespace

void register_cuda_masked_fill_kernels(OpRegistry& r) {
  cuda::set_kernels<MaskedFillKernels>(r, "masked_fill", cuda::AllTypes{});
}

}  // namespace kiln::shape
