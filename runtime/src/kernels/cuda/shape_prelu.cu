// prelu and prelu_backward on a GPU, with the CPU's formulas (prelu.hpp).
// The weight's gradient sums over each channel with atomics
// (shape_sums.cuh).
#include "shape_sums.cuh"
#include "../../ops/shape/families.hpp"
#include "../../ops/shape/prelu.hpp"

namespace kiln::shape {
namespace {

using cuda::from_math;
using cuda::to_math;

template <class T>
struct PreluAt {
  const T* x;
  const T* w;
  PreluGeometry g;
  __device__ T operator()(int64_t i) const {
    return from_math<T>(prelu_value(to_math(x[i]), to_math(w[g.channel(i)])));
  }
};

struct PreluKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& in = c.inputs[0];
    const PreluAt<T> at{in.data<T>(), c.inputs[1].data<T>(), prelu_geometry(c.op, in.shape(), c.inputs[1].shape())};
    cuda::run_index_map<T>("prelu", c.outputs[0], at);
  }
};

template <class T>
struct PreluGrads {
  const T* grad;
  const T* x;
  const T* w;
  T* grad_in;
  acc_t<T>* grad_w;
  PreluGeometry g;
  __device__ void operator()(int64_t i) const {
    const int64_t ch = g.channel(i);
    const acc_t<T> xi = to_math(x[i]), gi = to_math(grad[i]);
    grad_in[i] = from_math<T>(gi * prelu_input_slope(xi, to_math(w[ch])));
    atomicAdd(grad_w + ch, gi * prelu_weight_slope(xi));
  }
};

struct PreluBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& in = c.inputs[1];
    const Tensor& weight = c.inputs[2];
    Tensor& grad_w = c.outputs[1];
    const Tensor acc = cuda::start_sums<T>(c.runtime, grad_w, Tensor(), "prelu_backward");
    const PreluGrads<T> grads{c.inputs[0].data<T>(), in.data<T>(), weight.data<T>(), c.outputs[0].data<T>(),
                              acc.data<acc_t<T>>(), prelu_geometry(c.op, in.shape(), weight.shape())};
    cuda::run_for_each("prelu_backward", in, in.numel(), grads);
    cuda::finish_sums<T>(acc, grad_w, "prelu_backward");
  }
};

}  // namespace

void register_cuda_prelu_kernels(OpRegistry& r) {
  cuda::set_kernels<PreluKernels>(r, "prelu", cuda::FloatTypes{});
  cuda::set_kernels<PreluBackwardKernels>(r, "prelu_backward", cuda::FloatTypes{});
}

}  // namespace kiln::shape
