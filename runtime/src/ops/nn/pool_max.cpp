// max_pool2d over [N, C, H, W] and its backward op. The forward keeps no
// argmax indices or oneDNN workspace: max_pool2d_backward takes the input
// again and finds each window's maximum itself (the first one in row-major
// order; a NaN counts as the maximum), which keeps max_pool2d a one-output op
// at the price of one more pass over the windows. bf16 compares and adds
// in float.
#include <cmath>

#include "dnnl_precision.hpp"
#include "kiln/ops/helpers.hpp"
#include "pool_dnnl.hpp"
#include "pool_geometry.hpp"
#include "pool_ops.hpp"
#include "pool_window.hpp"

namespace kiln::nn {
namespace {

// Offset in its plane of the largest element of window (i, j).
template <class T>
int64_t window_argmax(const Pool2dGeometry& g, const T* plane, int64_t i, int64_t j) {
  int64_t best = -1;
  acc_t<T> best_value{};
  for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
    const int64_t y = i * g.stride_h - g.pad_h + ky * g.dilation_h;
    if (y < 0 || y >= g.h) continue;
    for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
      const int64_t x = j * g.stride_w - g.pad_w + kx * g.dilation_w;
      if (x < 0 || x >= g.w) continue;
      const acc_t<T> v = load_acc(plane[y * g.w + x]);
      if (best < 0 || v > best_value || (std::isnan(v) && !std::isnan(best_value))) {
        best = y * g.w + x;
        best_value = v;
      }
    }
  }
  return best;  // never -1: the padding checks leave every window an input element
}

// Whether every window lies inside its plane (no padding, none past the
// edge under ceil_mode), so window_argmax's bounds checks can be skipped.
bool windows_inside(const Pool2dGeometry& g) {
  return g.pad_h == 0 && g.pad_w == 0 && (g.out_h - 1) * g.stride_h + (g.kernel_h - 1) * g.dilation_h < g.h &&
         (g.out_w - 1) * g.stride_w + (g.kernel_w - 1) * g.dilation_w < g.w;
}

// window_argmax for a window inside its plane: the same choice (the first
// largest in row-major order, a NaN over any number) without bounds checks.
template <class T>
int64_t inside_window_argmax(const Pool2dGeometry& g, const T* plane, int64_t i, int64_t j) {
  const int64_t first = i * g.stride_h * g.w + j * g.stride_w;
  int64_t best = first;
  acc_t<T> best_value = load_acc(plane[first]);
  for (int64_t ky = 0; ky < g.kernel_h; ++ky)
    for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
      const int64_t at = first + ky * g.dilation_h * g.w + kx * g.dilation_w;
      const acc_t<T> v = load_acc(plane[at]);
      if (v > best_value || (std::isnan(v) && !std::isnan(best_value))) {
        best = at;
        best_value = v;
      }
    }
  return best;
}

void max_pool_infer(InferCall& c) {
  check_floating(c, 0);
  const Pool2dGeometry g = pool2d_geometry(c.op, c.attrs, c.inputs[0].shape());
  c.outputs.push_back({g.output_shape(), c.inputs[0].dtype(), c.device});
}

template <class T>
void max_pool_kernel(const KernelCall& c) {
  const Pool2dGeometry g = pool2d_geometry(c.op, c.attrs, c.inputs[0].shape());
  if (std::is_same_v<T, float> || (std::is_same_v<T, BFloat16> && cpu_bf16_support() != Bf16Support::none)) {
    dnnl_max_pool2d(c.runtime, g, c.inputs[0], c.outputs[0]);
  } else {
    const T* in = c.inputs[0].data<T>();
    T* out = c.outputs[0].data<T>();
    c.runtime.thread_pool().parallel_for(g.planes(), plane_grain(g.h * g.w), [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const T* plane = in + p * g.h * g.w;
        T* dst = out + p * g.out_h * g.out_w;
        for (int64_t i = 0; i < g.out_h; ++i)
          for (int64_t j = 0; j < g.out_w; ++j) dst[i * g.out_w + j] = plane[window_argmax(g, plane, i, j)];
      }
    });
  }
}

std::vector<Tensor> max_pool_backward(const BackwardCall& c) {
  const OpDef& op = c.runtime.op("max_pool2d_backward");
  return {c.runtime.call1(op, {c.grad_outputs[0], c.inputs[0]}, c.attrs)};
}

// Inputs: grad_output, input.
void max_pool_backward_infer(InferCall& c) {
  check_floating(c, 0);
  check_same_dtype(c);
  const Pool2dGeometry g = pool2d_geometry(c.op, c.attrs, c.inputs[1].shape());
  check_pool_grad_output(c.op, c.inputs[0].shape(), g.output_shape());
  c.outputs.push_back({c.inputs[1].shape(), c.inputs[1].dtype(), c.device});
}

template <class T>
void max_pool_backward_kernel(const KernelCall& c) {
  const Pool2dGeometry g = pool2d_geometry(c.op, c.attrs, c.inputs[1].shape());
  const T* grad_out = c.inputs[0].data<T>();
  const T* in = c.inputs[1].data<T>();
  T* grad_in = c.outputs[0].data<T>();
  // Overlapping windows can pick one element twice: each plane is one thread's.
  c.runtime.thread_pool().parallel_for(g.planes(), plane_grain(g.h * g.w), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* plane = in + p * g.h * g.w;
      const T* src = grad_out + p * g.out_h * g.out_w;
      T* dst = grad_in + p * g.h * g.w;
      std::fill(dst, dst + g.h * g.w, store_acc<T>(0));
      const bool inside = windows_inside(g);
      for (int64_t i = 0; i < g.out_h; ++i)
        for (int64_t j = 0; j < g.out_w; ++j) {
          T& d = dst[inside ? inside_window_argmax(g, plane, i, j) : window_argmax(g, plane, i, j)];
          d = store_acc<T>(load_acc(d) + load_acc(src[i * g.out_w + j]));
        }
    }
  });
}

}  // namespace

void register_max_pool_ops(OpRegistry& r) {
  {
    OpDef op;
    op.name = "max_pool2d";
    op.inputs = {{"input"}};
    op.attrs = pool2d_attrs(PoolKind::max, false);
    op.infer = max_pool_infer;
    op.backward = max_pool_backward;
    op.saves_outputs = false;
    op.set_kernel(DeviceType::cpu, DType::f32, max_pool_kernel<float>);
    op.set_kernel(DeviceType::cpu, DType::f64, max_pool_kernel<double>);
    op.set_kernel(DeviceType::cpu, DType::bf16, max_pool_kernel<BFloat16>);
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "max_pool2d_backward";
    op.inputs = {{"grad_output"}, {"input"}};
    op.attrs = pool2d_attrs(PoolKind::max, false);
    op.infer = max_pool_backward_infer;
    op.set_kernel(DeviceType::cpu, DType::f32, max_pool_backward_kernel<float>);
    op.set_kernel(DeviceType::cpu, DType::f64, max_pool_backward_kernel<double>);
    op.set_kernel(DeviceType::cpu, DType::bf16, max_pool_backward_kernel<BFloat16>);
    r.add(std::move(op));
  }
}

}  // namespace kiln::nn
