// cast on a GPU: every dtype to every dtype, converting as the CPU does
// (16-bit floats through float, anything non-zero to true).
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "map.cuh"

namespace kiln {
namespace {

template <class To, class From>
struct Convert {
  __device__ To operator()(From v) const { return cuda::convert<To>(v); }
};

// One kernel per input type; the output type is chosen inside.
struct CastKernels {
  template <class From>
  static void kernel(const KernelCall& c) {
    Tensor& out = c.outputs[0];
    visit_dtype(out.dtype(), [&]<class To>() {
      cuda::Map<To, From>::run_dense("cast", out, Convert<To, From>{}, c.inputs[0]);
    });
  }
};

}  // namespace

void register_cuda_cast_kernels(OpRegistry& r) {
  cuda::set_kernels<CastKernels>(r, "cast", cuda::AllTypes{});
}

}  // namespace kiln
