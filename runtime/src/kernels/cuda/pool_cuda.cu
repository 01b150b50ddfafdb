// max_pool2d, avg_pool2d, adaptive_avg_pool2d and their backward ops on a
// GPU, with kiln's own kernels rather than cuDNN's pooling, which has no
// dilation and no adaptive bins, divides a ceil_mode window hanging past the
// padding by its full size, breaks ties and NaNs its own way, and needs the
// forward's output to take max pooling back (kiln's max_pool2d_backward gets
// only the input). These follow the
// CPU kernels exactly: the first maximum in row-major order wins (a NaN
// counts as the maximum), windows are clipped as PyTorch clips them.
//
// Backward kernels gather: each input element sums the gradients of the
// windows that contain it, so no two threads write one element.
#include <cmath>

#include "../../memory/cuda/device_guard.hpp"
#include "../../ops/nn/pool_geometry.hpp"
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "launch.cuh"
#include "stream.hpp"

namespace kiln {
namespace {

using nn::Pool2dGeometry;

// Sizes of one [H, W] input plane and its [out_h, out_w] output plane.
struct PlaneSize {
  int64_t h, w, out_h, out_w;
};

// A window clipped to the input, [h0, h1) x [w0, w1), and its divisor.
struct AverageWindow {
  int64_t h0, h1, w0, w1, divisor;
};

template <class A>
__device__ bool replaces(A v, A best) {
  return v > best || (isnan(v) && !isnan(best));
}

// Offset in its plane of the largest element of window (i, j); the padding
// checks of pool2d_geometry leave every window an input element.
template <class T>
__device__ int64_t window_argmax(const Pool2dGeometry& g, const T* plane, int64_t i, int64_t j) {
  using A = cuda::math_t<T>;
  int64_t best = -1;
  A best_value{};
  for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
    const int64_t y = i * g.stride_h - g.pad_h + ky * g.dilation_h;
    if (y < 0 || y >= g.h) continue;
    for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
      const int64_t x = j * g.stride_w - g.pad_w + kx * g.dilation_w;
      if (x < 0 || x >= g.w) continue;
      const A v = cuda::to_math(plane[y * g.w + x]);
      if (best < 0 || replaces(v, best_value)) {
        best = y * g.w + x;
        best_value = v;
      }
    }
  }
  return best;
}

// Calls fn(i, j) for every output window whose tap (ky, kx) lands on input
// element (y, x): at most one per tap, so each window is visited once.
template <class Fn>
__device__ void for_each_window_containing(const Pool2dGeometry& g, int64_t y, int64_t x, Fn&& fn) {
  for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
    const int64_t row = y + g.pad_h - ky * g.dilation_h;
    if (row < 0 || row % g.stride_h != 0 || row / g.stride_h >= g.out_h) continue;
    for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
      const int64_t col = x + g.pad_w - kx * g.dilation_w;
      if (col < 0 || col % g.stride_w != 0 || col / g.stride_w >= g.out_w) continue;
      fn(row / g.stride_h, col / g.stride_w);
    }
  }
}

// avg_pool2d's windows: strided, padded, and clipped as PyTorch clips them.
struct StridedWindows {
  Pool2dGeometry g;
  bool count_include_pad;

  __device__ AverageWindow operator()(int64_t i, int64_t j) const {
    int64_t h0 = i * g.stride_h - g.pad_h, w0 = j * g.stride_w - g.pad_w;
    // Clipped at the padding first: what ceil_mode reaches past it never counts.
    int64_t h1 = min(h0 + g.kernel_h, g.h + g.pad_h), w1 = min(w0 + g.kernel_w, g.w + g.pad_w);
    const int64_t padded = (h1 - h0) * (w1 - w0);
    h0 = max(h0, int64_t(0));
    w0 = max(w0, int64_t(0));
    h1 = min(h1, g.h);
    w1 = min(w1, g.w);
    return {h0, h1, w0, w1, count_include_pad ? padded : (h1 - h0) * (w1 - w0)};
  }
  template <class Fn>
  __device__ void for_each_containing(int64_t y, int64_t x, Fn&& fn) const {
    for_each_window_containing(g, y, x, fn);
  }
};

// adaptive_avg_pool2d's bins: rows floor(i * H / out_h) to
// ceil((i + 1) * H / out_h), likewise columns.
struct AdaptiveWindows {
  PlaneSize p;

  __device__ AverageWindow operator()(int64_t i, int64_t j) const {
    const int64_t h0 = i * p.h / p.out_h, h1 = ((i + 1) * p.h + p.out_h - 1) / p.out_h;
    const int64_t w0 = j * p.w / p.out_w, w1 = ((j + 1) * p.w + p.out_w - 1) / p.out_w;
    return {h0, h1, w0, w1, (h1 - h0) * (w1 - w0)};
  }
  // Bin i holds row y exactly when y * out_h / H - 1 < i < (y + 1) * out_h / H.
  template <class Fn>
  __device__ void for_each_containing(int64_t y, int64_t x, Fn&& fn) const {
    const int64_t i_end = min(((y + 1) * p.out_h + p.h - 1) / p.h, p.out_h);
    const int64_t j_end = min(((x + 1) * p.out_w + p.w - 1) / p.w, p.out_w);
    for (int64_t i = y * p.out_h / p.h; i < i_end; ++i)
      for (int64_t j = x * p.out_w / p.w; j < j_end; ++j) fn(i, j);
  }
};

#define KILN_GRID_STRIDE(i, n) \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

template <class T>
__global__ void max_pool_forward(Pool2dGeometry g, const T* in, T* out, int64_t n) {
  KILN_GRID_STRIDE(o, n) {
    const int64_t plane = o / (g.out_h * g.out_w), i = o / g.out_w % g.out_h, j = o % g.out_w;
    const T* src = in + plane * g.h * g.w;
    out[o] = src[window_argmax(g, src, i, j)];
  }
}

template <class T>
__global__ void max_pool_backward(Pool2dGeometry g, const T* grad_out, const T* in, T* grad_in, int64_t n) {
  KILN_GRID_STRIDE(e, n) {
    const int64_t plane = e / (g.h * g.w), at = e % (g.h * g.w);
    const T* src = in + plane * g.h * g.w;
    const T* grad = grad_out + plane * g.out_h * g.out_w;
    cuda::math_t<T> sum = 0;
    for_each_window_containing(g, at / g.w, at % g.w, [&](int64_t i, int64_t j) {
      if (window_argmax(g, src, i, j) == at) sum += cuda::to_math(grad[i * g.out_w + j]);
    });
    grad_in[e] = cuda::from_math<T>(sum);
  }
}

template <class T, class Windows>
__global__ void average_forward(PlaneSize p, Windows windows, const T* in, T* out, int64_t n) {
  KILN_GRID_STRIDE(o, n) {
    const int64_t plane = o / (p.out_h * p.out_w), i = o / p.out_w % p.out_h, j = o % p.out_w;
    const T* src = in + plane * p.h * p.w;
    const AverageWindow win = windows(i, j);
    cuda::math_t<T> sum = 0;
    for (int64_t y = win.h0; y < win.h1; ++y)
      for (int64_t x = win.w0; x < win.w1; ++x) sum += cuda::to_math(src[y * p.w + x]);
    out[o] = cuda::from_math<T>(sum / cuda::math_t<T>(win.divisor));
  }
}

template <class T, class Windows>
__global__ void average_backward(PlaneSize p, Windows windows, const T* grad_out, T* grad_in, int64_t n) {
  KILN_GRID_STRIDE(e, n) {
    const int64_t plane = e / (p.h * p.w), at = e % (p.h * p.w);
    const T* grad = grad_out + plane * p.out_h * p.out_w;
    cuda::math_t<T> sum = 0;
    windows.for_each_containing(at / p.w, at % p.w, [&](int64_t i, int64_t j) {
      sum += cuda::to_math(grad[i * p.out_w + j]) / cuda::math_t<T>(windows(i, j).divisor);
    });
    grad_in[e] = cuda::from_math<T>(sum);
  }
}

#undef KILN_GRID_STRIDE

// Launches `kernel` over the n elements of `out` on its device's stream.
template <class Kernel, class... Args>
void launch(const Tensor& out, const char* what, Kernel kernel, Args... args) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const int device = out.device().index;
  CudaDeviceGuard guard(device);
  kernel<<<cuda::grid_size(n), cuda::kBlockSize, 0, cuda::compute_stream(device)>>>(args..., n);
  KILN_CUDA_CHECK_LAUNCH(what, " for ", describe(out));
}

struct MaxPoolForward {
  template <class T>
  static void kernel(const KernelCall& c) {
    const Pool2dGeometry g = nn::pool2d_geometry(c.op, c.attrs, c.inputs[0].shape());
    launch(c.outputs[0], "the max pooling kernel", max_pool_forward<T>, g, c.inputs[0].data<T>(),
           c.outputs[0].data<T>());
  }
};

// Inputs: grad_output, input.
struct MaxPoolBackward {
  template <class T>
  static void kernel(const KernelCall& c) {
    const Pool2dGeometry g = nn::pool2d_geometry(c.op, c.attrs, c.inputs[1].shape());
    launch(c.outputs[0], "the max pooling backward kernel", max_pool_backward<T>, g, c.inputs[0].data<T>(),
           c.inputs[1].data<T>(), c.outputs[0].data<T>());
  }
};

// The planes of [N, C, H, W] `input` pooled to [N, C, out_h, out_w] `output`.
PlaneSize plane_size(const Shape& input, const Shape& output) { return {input[2], input[3], output[2], output[3]}; }

StridedWindows strided_windows(const KernelCall& c, const Shape& input) {
  return {nn::pool2d_geometry(c.op, c.attrs, input), c.op.attr_bool(c.attrs, "count_include_pad")};
}

struct AvgPoolForward {
  template <class T>
  static void kernel(const KernelCall& c) {
    const Shape& input = c.inputs[0].shape();
    launch(c.outputs[0], "the average pooling kernel", average_forward<T, StridedWindows>,
           plane_size(input, c.outputs[0].shape()), strided_windows(c, input), c.inputs[0].data<T>(),
           c.outputs[0].data<T>());
  }
};

// Input: grad_output; the input's shape is an attribute (and the output's).
struct AvgPoolBackward {
  template <class T>
  static void kernel(const KernelCall& c) {
    const Shape& input = c.outputs[0].shape();
    launch(c.outputs[0], "the average pooling backward kernel", average_backward<T, StridedWindows>,
           plane_size(input, c.inputs[0].shape()), strided_windows(c, input), c.inputs[0].data<T>(),
           c.outputs[0].data<T>());
  }
};

struct AdaptivePoolForward {
  template <class T>
  static void kernel(const KernelCall& c) {
    const PlaneSize p = plane_size(c.inputs[0].shape(), c.outputs[0].shape());
    launch(c.outputs[0], "the adaptive average pooling kernel", average_forward<T, AdaptiveWindows>, p,
           AdaptiveWindows{p}, c.inputs[0].data<T>(), c.outputs[0].data<T>());
  }
};

struct AdaptivePoolBackward {
  template <class T>
  static void kernel(const KernelCall& c) {
    const PlaneSize p = plane_size(c.outputs[0].shape(), c.inputs[0].shape());
    launch(c.outputs[0], "the adaptive average pooling backward kernel", average_backward<T, AdaptiveWindows>, p,
           AdaptiveWindows{p}, c.inputs[0].data<T>(), c.outputs[0].data<T>());
  }
};

}  // namespace

void register_cuda_pool_kernels(OpRegistry& r) {
  cuda::set_kernels<MaxPoolForward>(r, "max_pool2d", cuda::FloatTypes{});
  cuda::set_kernels<MaxPoolBackward>(r, "max_pool2d_backward", cuda::FloatTypes{});
  cuda::set_kernels<AvgPoolForward>(r, "avg_pool2d", cuda::FloatTypes{});
  cuda::set_kernels<AvgPoolBackward>(r, "avg_pool2d_backward", cuda::FloatTypes{});
  cuda::set_kernels<AdaptivePoolForward>(r, "adaptive_avg_pool2d", cuda::FloatTypes{});
  cuda::set_kernels<AdaptivePoolBackward>(r, "adaptive_avg_pool2d_backward", cuda::FloatTypes{});
}

}  // namespace kiln
