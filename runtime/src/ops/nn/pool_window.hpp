// Averages over rectangular windows of each [H, W] plane: the shared loops of
// avg_pool2d and adaptive_avg_pool2d, which differ only in where a window
// lies and what it is divided by.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kiln/dtype.hpp"
#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/util/thread_pool.hpp"

namespace kiln::nn {

struct PlaneDims {
  int64_t planes = 0;  // N * C
  int64_t h = 0, w = 0, out_h = 0, out_w = 0;
};

// A window clipped to the input, [h0, h1) x [w0, w1), and its divisor.
struct AverageWindow {
  int64_t h0, h1, w0, w1;
  int64_t divisor;
};

// How many planes one thread takes at least, given the work of one plane.
inline int64_t plane_grain(int64_t work_per_plane) {
  return std::max<int64_t>(1, cpu::kElementGrain / std::max<int64_t>(1, work_per_plane));
}

// out[p, i, j] = sum of in[p] over window(i, j) / divisor.
template <class T, class WindowFn>
void average_windows_forward(ThreadPool& pool, const PlaneDims& d, const T* in, T* out, WindowFn window) {
  pool.parallel_for(d.planes, plane_grain(d.h * d.w), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* src = in + p * d.h * d.w;
      T* dst = out + p * d.out_h * d.out_w;
      for (int64_t i = 0; i < d.out_h; ++i)
        for (int64_t j = 0; j < d.out_w; ++j) {
          const AverageWindow win = window(i, j);
          acc_t<T> sum = 0;
          for (int64_t y = win.h0; y < win.h1; ++y)
            for (int64_t x = win.w0; x < win.w1; ++x) sum += load_acc(src[y * d.w + x]);
          dst[i * d.out_w + j] = store_acc<T>(sum / acc_t<T>(win.divisor));
        }
    }
  });
}

// grad_in[p] = sum over windows of grad_out[p, i, j] / divisor, spread evenly
// over the window. Windows overlap, so each plane is one thread's.
template <class T, class WindowFn>
void average_windows_backward(ThreadPool& pool, const PlaneDims& d, const T* grad_out, T* grad_in, WindowFn window) {
  pool.parallel_for(d.planes, plane_grain(d.h * d.w), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* src = grad_out + p * d.out_h * d.out_w;
      T* dst = grad_in + p * d.h * d.w;
      std::fill(dst, dst + d.h * d.w, T(0));
      for (int64_t i = 0; i < d.out_h; ++i)
        for (int64_t j = 0; j < d.out_w; ++j) {
          const AverageWindow win = window(i, j);
          const T share = src[i * d.out_w + j] / T(win.divisor);
          for (int64_t y = win.h0; y < win.h1; ++y)
            for (int64_t x = win.w0; x < win.w1; ++x) dst[y * d.w + x] += share;
        }
    }
  });
}

}  // namespace kiln::nn
