// Tensors made from attributes on a GPU: zeros, ones and fill (constants,
// through cuda::fill) and arange.
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "fill.hpp"
#include "map.cuh"

namespace kiln {
namespace {

void zeros_kernel(const KernelCall& c) { cuda::fill(c.outputs[0], 0.0); }
void ones_kernel(const KernelCall& c) { cuda::fill(c.outputs[0], 1.0); }
void fill_kernel(const KernelCall& c) { cuda::fill(c.outputs[0], c.op.attr_real(c.attrs, "value")); }

// start + i * step rounded twice, never fused into one multiply-add, so each
// element is the double the CPU computes before converting it.
template <class T>
struct ArangeAt {
  double start, step;
  __device__ T operator()(int64_t i) const { return cuda::convert<T>(__dadd_rn(start, __dmul_rn(double(i), step))); }
};

struct ArangeKernels {
  template <class T>
  static void kernel(const KernelCall& c) {
    const ArangeAt<T> at{c.op.attr_real(c.attrs, "start"), c.op.attr_real(c.attrs, "step")};
    cuda::run_index_map<T>("arange", c.outputs[0], at);
  }
};

}  // namespace

void register_cuda_creation_kernels(OpRegistry& r) {
  for (DType t : kAllDTypes) {
    r.set_kernel("zeros", DeviceType::cuda, t, zeros_kernel);
    r.set_kernel("ones", DeviceType::cuda, t, ones_kernel);
    r.set_kernel("fill", DeviceType::cuda, t, fill_kernel);
  }
  cuda::set_kernels<ArangeKernels>(r, "arange",
                                   cuda::TypeList<float, double, Half, BFloat16, int32_t, int64_t, uint8_t>{});
}

}  // namespace kiln
