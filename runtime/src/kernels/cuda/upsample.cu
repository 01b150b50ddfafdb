// upsample_nearest2d, upsample_bilinear2d and their backward ops on a GPU,
// with the CPU's geometry (ops/nn/upsample.hpp): a thread per output pixel.
// The backward adds each output gradient into the input pixels it read,
// with atomics (shape_sums.cuh), since neighbouring outputs share inputs.
#include "cuda_kernels.hpp"
#include "shape_sums.cuh"
#include "../../ops/nn/upsample.hpp"

namespace kiln {
namespace {

using cuda::from_math;
using cuda::to_math;
using nn::Upsample2dGeometry;

// Plane, row and column of flat output index e.
struct OutputPixel {
  int64_t plane, i, j;
};

__device__ inline OutputPixel output_pixel(const Upsample2dGeometry& g, int64_t e) {
  const int64_t plane_size = g.h.out * g.w.out;
  const int64_t in_plane = e % plane_size;
  return {e / plane_size, in_plane / g.w.out, in_plane % g.w.out};
}

template <class T>
struct ResampleAt {
  const T* in;
  Upsample2dGeometry g;
  __device__ T operator()(int64_t e) const {
    const OutputPixel o = output_pixel(g, e);
    const T* plane = in + o.plane * g.h.in * g.w.in;
    acc_t<T> v = 0;
    nn::for_each_tap(g, o.i, o.j, [&](int64_t k, double weight) { v += acc_t<T>(weight) * to_math(plane[k]); });
    return from_math<T>(v);
  }
};

struct UpsampleKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const ResampleAt<T> at{c.inputs[0].data<T>(), nn::upsample2d_geometry(c.op, c.attrs, c.inputs[0].shape())};
    cuda::run_index_map<T>("upsample", c.outputs[0], at);
  }
};

template <class T>
struct ResampleGrad {
  const T* grad;
  acc_t<T>* grad_in;
  Upsample2dGeometry g;
  __device__ void operator()(int64_t e) const {
    const OutputPixel o = output_pixel(g, e);
    acc_t<T>* plane = grad_in + o.plane * g.h.in * g.w.in;
    const acc_t<T> v = to_math(grad[e]);
    nn::for_each_tap(g, o.i, o.j, [&](int64_t k, double weight) { atomicAdd(plane + k, acc_t<T>(weight) * v); });
  }
};

struct UpsampleBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    Tensor& grad_in = c.outputs[0];
    const Tensor& grad = c.inputs[0];
    const Tensor acc = cuda::start_sums<T>(c.runtime, grad_in, Tensor(), "upsample_backward");
    const ResampleGrad<T> add{grad.data<T>(), acc.data<acc_t<T>>(),
                              nn::upsample2d_geometry(c.op, c.attrs, grad_in.shape())};
    cuda::run_for_each("upsample_backward", grad, grad.numel(), add);
    cuda::finish_sums<T>(acc, grad_in, "upsample_backward");
  }
};

}  // namespace

void register_cuda_upsample_kernels(OpRegistry& r) {
  for (const char* name : {"upsample_nearest2d", "upsample_bilinear2d"}) {
    cuda::set_kernels<UpsampleKernels>(r, name, cuda::FloatTypes{});
    cuda::set_kernels<UpsampleBackwardKernels>(r, std::string(name) + "_backward", cuda::FloatTypes{});
  }
}

}  // namespace kiln
