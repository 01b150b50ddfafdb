// max_pool2d over [N, C, H, W] and its backward op. The forward keeps no
// argmax indices or oneDNN workspace: max_pool2d_backward takes the input
// again and finds each window's maximum itself (the first one in row-major
// order; a NaN counts as the maximum), which keeps max_pool2d a one-output op
// at the price of one more pass over the windows. bf16 compares and adds
// in float.
#include <cmath>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

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

#if defined(__SSE2__)
// Moves f32 or bf16 elements in and out of SSE vectors of four floats. A
// bf16 is the upper half of its f32, so both directions are exact for the
// values the 2x2 path stores (elements of its inputs, or 0).
template <class T> struct SseLanes;

template <> struct SseLanes<float> {
  static __m128 load4(const float* p) { return _mm_loadu_ps(p); }
  static void load8(const float* p, __m128& lo, __m128& hi) { lo = _mm_loadu_ps(p), hi = _mm_loadu_ps(p + 4); }
  static void store8(float* p, __m128 lo, __m128 hi) { _mm_storeu_ps(p, lo), _mm_storeu_ps(p + 4, hi); }
  static void store4(float* p, __m128 v) { _mm_storeu_ps(p, v); }
};

template <> struct SseLanes<BFloat16> {
  static __m128 load4(const BFloat16* p) {
    const __m128i bits = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), bits));
  }
  static void load8(const BFloat16* p, __m128& lo, __m128& hi) {
    const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    lo = _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), bits));
    hi = _mm_castsi128_ps(_mm_unpackhi_epi16(_mm_setzero_si128(), bits));
  }
  // The arithmetic shift leaves each upper half sign-extended, which the
  // saturating pack then keeps bit for bit.
  static void store8(BFloat16* p, __m128 lo, __m128 hi) {
    const __m128i upper = _mm_packs_epi32(_mm_srai_epi32(_mm_castps_si128(lo), 16),
                                          _mm_srai_epi32(_mm_castps_si128(hi), 16));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), upper);
  }
  static void store4(BFloat16* p, __m128 v) {
    const __m128i upper = _mm_packs_epi32(_mm_srai_epi32(_mm_castps_si128(v), 16), _mm_setzero_si128());
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), upper);
  }
};
#endif

#if defined(__SSE2__)
// Four neighbouring 2x2 stride-2 windows of an f32 or bf16 plane in SSE
// vectors (x86-64's baseline), each window's elements in row-major order
// a b over c d, and the choice window_argmax makes among them without a
// branch on the values (which are as good as random): *_over marks the
// lanes where that element takes over from the ones before it.
struct Windows2x2 {
  __m128 a, b, c, d, b_over, c_over, d_over;

  static __m128 select(__m128 mask, __m128 x, __m128 y) { return _mm_or_ps(_mm_and_ps(mask, x), _mm_andnot_ps(mask, y)); }

  // v takes over from best when it is larger, or a NaN over a number.
  static __m128 takes_over(__m128 v, __m128 best) {
    return _mm_andnot_ps(_mm_cmple_ps(v, best), _mm_cmpeq_ps(best, best));
  }

  template <class T>
  static Windows2x2 load(const T* top, const T* bottom) {
    __m128 t0, t1, b0, b1;
    SseLanes<T>::load8(top, t0, t1);
    SseLanes<T>::load8(bottom, b0, b1);
    Windows2x2 w;
    w.a = _mm_shuffle_ps(t0, t1, _MM_SHUFFLE(2, 0, 2, 0));
    w.b = _mm_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 1, 3, 1));
    w.c = _mm_shuffle_ps(b0, b1, _MM_SHUFFLE(2, 0, 2, 0));
    w.d = _mm_shuffle_ps(b0, b1, _MM_SHUFFLE(3, 1, 3, 1));
    w.b_over = takes_over(w.b, w.a);
    const __m128 ab = select(w.b_over, w.b, w.a);
    w.c_over = takes_over(w.c, ab);
    w.d_over = takes_over(w.d, select(w.c_over, w.c, ab));
    return w;
  }

  __m128 largest() const { return select(d_over, d, select(c_over, c, select(b_over, b, a))); }
};
#endif

// Whether this build has the vector kernels of 2x2 windows below; without
// them oneDNN pools f32 (and bf16 where the CPU computes it).
#if defined(__SSE2__)
constexpr bool kVectorWindows = true;
#else
constexpr bool kVectorWindows = false;
#endif

// The column of each group of four windows in a row of out_w: 0, 4, 8, ...,
// and, when out_w is not a multiple of four, a last group that ends at the
// row's end and overlaps the one before it. Windows do not overlap, so a
// window done twice is written twice with the same values.
template <class Fn>
void for_window_groups(int64_t out_w, Fn&& fn) {
  for (int64_t j = 0; j + 4 <= out_w; j += 4) fn(j);
  if (out_w % 4 != 0) fn(out_w - 4);
}

// max_pool2d over 2x2 windows with stride 2 inside an f32 or bf16 plane,
// four windows at a time: the same choice as window_argmax. oneDNN 2.6
// pools planar tensors with a scalar loop where the CPU lacks AVX-512
// (2.2 ms against 0.3 ms here for [64, 10, 24, 24] on a Zen 3). Returns the
// number of output columns done: all of them, or none in planes under
// four windows wide, which the caller does one by one.
template <class T>
int64_t max_pool_2x2_forward(const T* plane, T* out, int64_t w, int64_t out_h, int64_t out_w) {
#if defined(__SSE2__)
  if (out_w < 4) return 0;
  for (int64_t i = 0; i < out_h; ++i) {
    const T* top = plane + 2 * i * w;
    for_window_groups(out_w, [&](int64_t j) {
      SseLanes<T>::store4(out + i * out_w + j, Windows2x2::load(top + 2 * j, top + w + 2 * j).largest());
    });
  }
  return out_w;
#else
  (void)plane, (void)out, (void)w, (void)out_h, (void)out_w;
  return 0;
#endif
}

// The backward of the same windows: all four elements of each are written,
// the output's gradient at the choice and 0 elsewhere. Returns the number
// of output columns done, as the forward does.
template <class T>
int64_t max_pool_2x2_backward(const T* plane, const T* grad_out, T* grad_in, int64_t w, int64_t out_h,
                              int64_t out_w) {
#if defined(__SSE2__)
  using Lanes = SseLanes<T>;
  if (out_w < 4) return 0;
  for (int64_t i = 0; i < out_h; ++i) {
    const T* top = plane + 2 * i * w;
    T* top_grad = grad_in + 2 * i * w;
    T* bottom_grad = top_grad + w;
    for_window_groups(out_w, [&](int64_t j) {
      const Windows2x2 win = Windows2x2::load(top + 2 * j, top + w + 2 * j);
      const __m128 g = Lanes::load4(grad_out + i * out_w + j);
      const __m128 at_d = _mm_and_ps(win.d_over, g);
      const __m128 at_c = _mm_andnot_ps(win.d_over, _mm_and_ps(win.c_over, g));
      const __m128 at_b = _mm_andnot_ps(_mm_or_ps(win.c_over, win.d_over), _mm_and_ps(win.b_over, g));
      const __m128 at_a = _mm_andnot_ps(_mm_or_ps(win.b_over, _mm_or_ps(win.c_over, win.d_over)), g);
      Lanes::store8(top_grad + 2 * j, _mm_unpacklo_ps(at_a, at_b), _mm_unpackhi_ps(at_a, at_b));
      Lanes::store8(bottom_grad + 2 * j, _mm_unpacklo_ps(at_c, at_d), _mm_unpackhi_ps(at_c, at_d));
    });
  }
  return out_w;
#else
  (void)plane, (void)grad_out, (void)grad_in, (void)w, (void)out_h, (void)out_w;
  return 0;
#endif
}

bool is_2x2_stride_2(const Pool2dGeometry& g) {
  return windows_inside(g) && g.kernel_h == 2 && g.kernel_w == 2 && g.stride_h == 2 && g.stride_w == 2 &&
         g.dilation_h == 1 && g.dilation_w == 1;
}

void max_pool_infer(InferCall& c) {
  check_floating(c, 0);
  const Pool2dGeometry g = pool2d_geometry(c.op, c.attrs, c.inputs[0].shape());
  c.outputs.push_back({g.output_shape(), c.inputs[0].dtype(), c.device});
}

template <class T>
void max_pool_kernel(const KernelCall& c) {
  const Pool2dGeometry g = pool2d_geometry(c.op, c.attrs, c.inputs[0].shape());
  constexpr bool sse_lanes = std::is_same_v<T, float> || std::is_same_v<T, BFloat16>;
  const bool tiled = kVectorWindows && is_2x2_stride_2(g);
  if (sse_lanes && !tiled && (std::is_same_v<T, float> || cpu_bf16_support() != Bf16Support::none)) {
    dnnl_max_pool2d(c.runtime, g, c.inputs[0], c.outputs[0]);
    return;
  }
  const T* in = c.inputs[0].data<T>();
  T* out = c.outputs[0].data<T>();
  c.runtime.thread_pool().parallel_for(g.planes(), plane_grain(g.h * g.w), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* plane = in + p * g.h * g.w;
      T* dst = out + p * g.out_h * g.out_w;
      int64_t first_column = 0;
      if constexpr (sse_lanes)
        if (tiled) first_column = max_pool_2x2_forward(plane, dst, g.w, g.out_h, g.out_w);
      for (int64_t i = 0; i < g.out_h; ++i)
        for (int64_t j = first_column; j < g.out_w; ++j) dst[i * g.out_w + j] = plane[window_argmax(g, plane, i, j)];
    }
  });
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

// One 2x2 stride-2 window of max_pool_2x2_backward's tail: all four
// gradient elements written, the output's gradient at the choice.
template <class T>
void max_pool_2x2_window_backward(const T* top, T grad, T* top_grad, int64_t w) {
  const T* values[4] = {top, top + 1, top + w, top + w + 1};
  int best = 0;
  for (int k = 1; k < 4; ++k) {
    const acc_t<T> v = load_acc(*values[k]), best_value = load_acc(*values[best]);
    if (v > best_value || (std::isnan(v) && !std::isnan(best_value))) best = k;
  }
  T* grads[4] = {top_grad, top_grad + 1, top_grad + w, top_grad + w + 1};
  for (int k = 0; k < 4; ++k) *grads[k] = k == best ? grad : store_acc<T>(0);
}

// max_pool2d_backward of one plane for 2x2 windows with stride 2: the
// windows tile the plane but for a last odd row or column, which no window
// covers and which is zeroed; everything else is written once.
template <class T>
void max_pool_2x2_plane_backward(const Pool2dGeometry& g, const T* plane, const T* grad_out, T* grad_in) {
  int64_t first_column = 0;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>)
    first_column = max_pool_2x2_backward(plane, grad_out, grad_in, g.w, g.out_h, g.out_w);
  for (int64_t i = 0; i < g.out_h; ++i) {
    for (int64_t j = first_column; j < g.out_w; ++j)
      max_pool_2x2_window_backward(plane + 2 * (i * g.w + j), grad_out[i * g.out_w + j], grad_in + 2 * (i * g.w + j),
                                   g.w);
    if (g.w % 2 != 0) {
      grad_in[2 * i * g.w + g.w - 1] = store_acc<T>(0);
      grad_in[(2 * i + 1) * g.w + g.w - 1] = store_acc<T>(0);
    }
  }
  if (g.h % 2 != 0) std::fill(grad_in + (g.h - 1) * g.w, grad_in + g.h * g.w, store_acc<T>(0));
}

template <class T>
void max_pool_backward_kernel(const KernelCall& c) {
  const Pool2dGeometry g = pool2d_geometry(c.op, c.attrs, c.inputs[1].shape());
  const T* grad_out = c.inputs[0].data<T>();
  const T* in = c.inputs[1].data<T>();
  T* grad_in = c.outputs[0].data<T>();
  const bool inside = windows_inside(g), tiled = is_2x2_stride_2(g);
  // Overlapping windows can pick one element twice: each plane is one thread's.
  c.runtime.thread_pool().parallel_for(g.planes(), plane_grain(g.h * g.w), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* plane = in + p * g.h * g.w;
      const T* src = grad_out + p * g.out_h * g.out_w;
      T* dst = grad_in + p * g.h * g.w;
      if (tiled) {
        max_pool_2x2_plane_backward(g, plane, src, dst);
        continue;
      }
      std::fill(dst, dst + g.h * g.w, store_acc<T>(0));
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
